/*
 * libge_runner.so, libgraph.so and libacl_tdt_channel.so: the graph engine, its graph
 * library and the host-device data channels. Frameworks link them (torch_npu 2.13.0's
 * libtorch_npu.so has them as DT_NEEDED) and bind nothing of them at load; they are out of
 * the emulator's scope. Each library holds this one function, which says so.
 */
#include "emu_internal.h"

EMU_EXPORT const char *aclemuGraphEngineStatus(void)
{
    return "the graph engine, graph library and data channels are not supported by the aclnn_py emulator";
}
