# Environment of the aclnn_py host emulator's CANN {{version}} tree, set as CANN's set_env.sh
# sets it (hicann/runtime scripts/package/runtime/set_env.sh): the install root, operator
# packages, and the library folders the dynamic linker needs (lib64 and the driver's).
# Source it from bash or zsh: . {tree}/set_env.sh
_aclnn_emu_root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd -P)"
export ASCEND_TOOLKIT_HOME="$_aclnn_emu_root"
export ASCEND_HOME_PATH="$_aclnn_emu_root"
export ASCEND_OPP_PATH="$_aclnn_emu_root/opp"
export ASCEND_AICPU_PATH="$_aclnn_emu_root"
export LD_LIBRARY_PATH="$_aclnn_emu_root/lib64:$_aclnn_emu_root/driver/lib64:$_aclnn_emu_root/driver/lib64/common:$_aclnn_emu_root/driver/lib64/driver${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset _aclnn_emu_root
