#ifndef ROUTEKIT_SYSTEM_SHIM_H
#define ROUTEKIT_SYSTEM_SHIM_H
// The system calls RouteKit makes beyond Foundation: glibc's allocator tuning (mallopt, malloc_trim), naming the
// calling thread and its kernel id. Absent (no-ops) elsewhere.
#if defined(__linux__) && __has_include(<malloc.h>)
#include <malloc.h>
#define ROUTEKIT_HAS_MALLOPT 1
#endif
#if defined(__linux__) && __has_include(<sys/prctl.h>)
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
/// Names the calling thread as `ps -L`, `top -H` and /proc/PID/task/TID/comm show it (at most 15 characters kept).
static inline void rk_name_this_thread(const char *name) { (void)prctl(PR_SET_NAME, name, 0, 0, 0); }
/// The calling thread's id at the kernel (the TID of /proc/PID/task/TID); 0 where there is none.
static inline int rk_this_thread_id(void) { return (int)syscall(SYS_gettid); }
#else
static inline void rk_name_this_thread(const char *name) { (void)name; }
static inline int rk_this_thread_id(void) { return 0; }
#endif
#endif
