/* The replay harness: CANN's logging macros, which the unit tests may use, print nothing. */
#ifndef CANN_UT_OPDEV_OP_LOG_H
#define CANN_UT_OPDEV_OP_LOG_H

#define OP_LOGD(...) ((void)0)
#define OP_LOGI(...) ((void)0)
#define OP_LOGW(...) ((void)0)
#define OP_LOGE(...) ((void)0)

#endif
