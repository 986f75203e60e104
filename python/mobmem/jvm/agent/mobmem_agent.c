/*
 * mobmem_agent.c — a small JVMTI agent that measures one timed iteration of a JVM workload and
 * splits its cost into "stop-the-world" (STW) and "other" phases, in the manner of the ISPASS'22
 * lower-bound-overhead (LBO) methodology.
 *
 * What it does
 *   - In Agent_OnLoad, i.e. before the JVM creates its GC, compiler and application threads, it opens
 *     perf_event counters on the calling thread with inherit=1, so every thread created later is
 *     counted. Events: task-clock (software) and, where the kernel and hardware allow, cycles and
 *     instructions. Each event that cannot be opened is reported with its errno; it is never faked.
 *   - At JVMTI GarbageCollectionStart / GarbageCollectionFinish (sent by HotSpot at the start and
 *     end of every GC pause, for all collectors including the pauses of ZGC and Shenandoah) it
 *     reads the counters and accumulates the deltas: the cost of *all* threads during pauses.
 *   - The workload calls the native methods mobmem.bench.Probe.begin0()/end0() around its timed
 *     iteration (HotSpot looks native methods up in agent libraries too). end0() writes one JSON
 *     object with the deltas over that window to the file named by the `out=` option.
 *   - Fallback ("proc" mode), used when perf_event_open is refused or when `mode=proc` is given:
 *     total CPU from the process CPU clock, STW CPU from the per-thread CPU of every thread listed
 *     in /proc/self/task, snapshotted at GC start and finish. Pause times then come from the
 *     unified GC log (-Xlog:gc), which the Python side parses; the agent still reports its own
 *     pause clock for cross-checking.
 *
 * What it leaves out: sampling, per-phase attribution inside a pause, concurrent-GC attribution
 * (concurrent GC work stays in the distilled cost, which keeps the bound conservative).
 *
 * Options (comma separated): out=FILE, mode=auto|perf|proc, events=task-clock+cycles+instructions
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <jni.h>
#include <jvmti.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS 4
#define MAX_THREADS 8192

typedef struct {
    const char *name;
    uint32_t type;
    uint64_t config;
    int fd;
    int err;            /* errno of the failed open, 0 if open */
    int exclude_kernel; /* 1 if the kernel only allowed user-space counting */
} event_t;

static event_t events[MAX_EVENTS];
static int n_events = 0;
static int proc_mode = 0;          /* 1: /proc fallback */
static char mode_reason[256] = "";
static char out_path[4096] = "";

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* accumulators (guarded by lock) */
static int in_pause = 0;
static uint64_t pause_count = 0;
static uint64_t pause_start_wall = 0;
static uint64_t stw_wall_acc = 0;
static uint64_t ev_pause_start[MAX_EVENTS];
static uint64_t ev_stw_acc[MAX_EVENTS];
static uint64_t proc_stw_acc = 0; /* proc mode: CPU ns of all threads during pauses */

/* proc-mode per-thread snapshot at pause start */
static pid_t snap_tid[MAX_THREADS];
static uint64_t snap_cpu[MAX_THREADS];
static int snap_n = 0;

/* begin snapshot */
static int began = 0;
static uint64_t b_wall, b_stw_wall, b_pauses, b_proc_cpu, b_proc_stw;
static uint64_t b_ev[MAX_EVENTS], b_ev_stw[MAX_EVENTS];
static int written = 0;

static uint64_t now_ns(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group, unsigned long flags) {
    return syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

static uint64_t read_event(int i) {
    uint64_t buf[3] = {0, 0, 0}; /* value, time_enabled, time_running */
    if (events[i].fd < 0) return 0;
    if (read(events[i].fd, buf, sizeof buf) != (ssize_t)sizeof buf) return 0;
    if (buf[2] > 0 && buf[2] < buf[1]) /* multiplexed: scale */
        return (uint64_t)((double)buf[0] * (double)buf[1] / (double)buf[2]);
    return buf[0];
}

static void add_event(const char *name, uint32_t type, uint64_t config) {
    if (n_events >= MAX_EVENTS) return;
    event_t *e = &events[n_events++];
    e->name = name; e->type = type; e->config = config; e->fd = -1; e->err = 0; e->exclude_kernel = 0;
}

static void open_events(void) {
    for (int i = 0; i < n_events; i++) {
        event_t *e = &events[i];
        for (int ek = 0; ek <= 1; ek++) {
            struct perf_event_attr a;
            memset(&a, 0, sizeof a);
            a.size = sizeof a;
            a.type = e->type;
            a.config = e->config;
            a.inherit = 1;
            a.disabled = 0;
            a.exclude_kernel = ek;
            a.exclude_hv = 1;
            a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
            long fd = perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
            if (fd >= 0) { e->fd = (int)fd; e->err = 0; e->exclude_kernel = ek; break; }
            e->err = errno;
            if (errno != EACCES && errno != EPERM) break; /* only retry on permission problems */
        }
    }
}

/* CPU time of one thread of this process: the kernel's per-thread CPU clock (exact, also for a
 * running thread); /proc/self/task/TID/schedstat as a second source. */
static uint64_t thread_cpu_ns(pid_t tid) {
    clockid_t cid = (clockid_t)((~(unsigned)tid << 3) | 6u); /* MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED) */
    struct timespec ts;
    if (clock_gettime(cid, &ts) == 0) return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    char p[64];
    snprintf(p, sizeof p, "/proc/self/task/%d/schedstat", (int)tid);
    FILE *f = fopen(p, "r");
    if (!f) return 0;
    unsigned long long v = 0;
    if (fscanf(f, "%llu", &v) != 1) v = 0;
    fclose(f);
    return v;
}

/* Fills tids/cpus with every thread in /proc/self/task; returns the count. */
static int snapshot_threads(pid_t *tids, uint64_t *cpus, int max) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < max) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
        pid_t t = (pid_t)atoi(de->d_name);
        tids[n] = t;
        cpus[n] = thread_cpu_ns(t);
        n++;
    }
    closedir(d);
    return n;
}

static pid_t fin_tid[MAX_THREADS];
static uint64_t fin_cpu[MAX_THREADS];

static void JNICALL gc_start(jvmtiEnv *jvmti) {
    (void)jvmti;
    pthread_mutex_lock(&lock);
    in_pause = 1;
    pause_start_wall = now_ns(CLOCK_MONOTONIC);
    for (int i = 0; i < n_events; i++) ev_pause_start[i] = read_event(i);
    if (proc_mode) snap_n = snapshot_threads(snap_tid, snap_cpu, MAX_THREADS);
    pthread_mutex_unlock(&lock);
}

static void JNICALL gc_finish(jvmtiEnv *jvmti) {
    (void)jvmti;
    pthread_mutex_lock(&lock);
    if (in_pause) {
        for (int i = 0; i < n_events; i++) ev_stw_acc[i] += read_event(i) - ev_pause_start[i];
        if (proc_mode) {
            int m = snapshot_threads(fin_tid, fin_cpu, MAX_THREADS);
            for (int j = 0; j < m; j++) {
                for (int k = 0; k < snap_n; k++) {
                    if (snap_tid[k] == fin_tid[j]) {
                        if (fin_cpu[j] > snap_cpu[k]) proc_stw_acc += fin_cpu[j] - snap_cpu[k];
                        break;
                    }
                }
            }
        }
        stw_wall_acc += now_ns(CLOCK_MONOTONIC) - pause_start_wall;
        pause_count++;
        in_pause = 0;
    }
    pthread_mutex_unlock(&lock);
}

/* Current totals, with a pause in progress counted up to now. Caller holds lock. */
static void current(uint64_t *wall, uint64_t *stw_wall, uint64_t *proc_cpu, uint64_t *ev, uint64_t *ev_stw) {
    *wall = now_ns(CLOCK_MONOTONIC);
    *proc_cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    *stw_wall = stw_wall_acc + (in_pause ? *wall - pause_start_wall : 0);
    for (int i = 0; i < n_events; i++) {
        ev[i] = read_event(i);
        ev_stw[i] = ev_stw_acc[i] + (in_pause ? ev[i] - ev_pause_start[i] : 0);
    }
}

static void json_escape(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s >= 0x20) fputc(*s, f);
    }
}

static void write_result(const char *window, uint64_t wall, uint64_t stw_wall, uint64_t pauses,
                         uint64_t proc_cpu, uint64_t proc_stw, const uint64_t *ev, const uint64_t *ev_stw) {
    if (!out_path[0]) return;
    FILE *f = fopen(out_path, "w");
    if (!f) { fprintf(stderr, "mobmem_agent: cannot write %s: %s\n", out_path, strerror(errno)); return; }
    fprintf(f, "{\"agent\":\"mobmem_agent\",\"version\":1,\"window\":\"%s\",\"mode\":\"%s\",\"mode_reason\":\"",
            window, proc_mode ? "proc" : "perf");
    json_escape(f, mode_reason);
    fprintf(f, "\",\"wall_ns\":%llu,\"stw_wall_ns\":%llu,\"pauses\":%llu,\"process_cpu_ns\":%llu",
            (unsigned long long)wall, (unsigned long long)stw_wall, (unsigned long long)pauses,
            (unsigned long long)proc_cpu);
    if (proc_mode) fprintf(f, ",\"proc_stw_cpu_ns\":%llu", (unsigned long long)proc_stw);
    fprintf(f, ",\"events\":{");
    for (int i = 0; i < n_events; i++) {
        event_t *e = &events[i];
        fprintf(f, "%s\"%s\":", i ? "," : "", e->name);
        if (e->fd >= 0)
            fprintf(f, "{\"ok\":true,\"total\":%llu,\"stw\":%llu,\"exclude_kernel\":%s}",
                    (unsigned long long)ev[i], (unsigned long long)ev_stw[i], e->exclude_kernel ? "true" : "false");
        else {
            fprintf(f, "{\"ok\":false,\"error\":\"");
            json_escape(f, strerror(e->err));
            fprintf(f, "\"}");
        }
    }
    fprintf(f, "}}\n");
    fclose(f);
}

JNIEXPORT void JNICALL Java_mobmem_bench_Probe_begin0(JNIEnv *env, jclass cls) {
    (void)env; (void)cls;
    pthread_mutex_lock(&lock);
    current(&b_wall, &b_stw_wall, &b_proc_cpu, b_ev, b_ev_stw);
    b_pauses = pause_count + (uint64_t)in_pause;
    b_proc_stw = proc_stw_acc;
    began = 1;
    pthread_mutex_unlock(&lock);
}

JNIEXPORT void JNICALL Java_mobmem_bench_Probe_end0(JNIEnv *env, jclass cls) {
    (void)env; (void)cls;
    uint64_t wall, stw_wall, proc_cpu, ev[MAX_EVENTS], ev_stw[MAX_EVENTS], d_ev[MAX_EVENTS], d_stw[MAX_EVENTS];
    pthread_mutex_lock(&lock);
    current(&wall, &stw_wall, &proc_cpu, ev, ev_stw);
    if (!began) { pthread_mutex_unlock(&lock); return; }
    for (int i = 0; i < n_events; i++) { d_ev[i] = ev[i] - b_ev[i]; d_stw[i] = ev_stw[i] - b_ev_stw[i]; }
    write_result("iteration", wall - b_wall, stw_wall - b_stw_wall, pause_count - b_pauses,
                 proc_cpu - b_proc_cpu, proc_stw_acc - b_proc_stw, d_ev, d_stw);
    written = 1;
    pthread_mutex_unlock(&lock);
}

static void parse_options(const char *options) {
    int want_task = 1, want_cycles = 1, want_instr = 1;
    const char *mode = "auto";
    static char buf[8192];
    if (options) {
        strncpy(buf, options, sizeof buf - 1);
        char *save = NULL;
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (strncmp(tok, "out=", 4) == 0) strncpy(out_path, tok + 4, sizeof out_path - 1);
            else if (strncmp(tok, "mode=", 5) == 0) mode = tok + 5;
            else if (strncmp(tok, "events=", 7) == 0) {
                want_task = strstr(tok, "task-clock") != NULL;
                want_cycles = strstr(tok, "cycles") != NULL;
                want_instr = strstr(tok, "instructions") != NULL;
            }
        }
    }
    if (strcmp(mode, "proc") == 0) {
        proc_mode = 1;
        snprintf(mode_reason, sizeof mode_reason, "requested (mode=proc)");
        return;
    }
    if (want_task) add_event("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
    if (want_cycles) add_event("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
    if (want_instr) add_event("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
    open_events();
    int any = 0;
    for (int i = 0; i < n_events; i++) any |= events[i].fd >= 0;
    if (!any) {
        proc_mode = 1;
        snprintf(mode_reason, sizeof mode_reason, "perf_event_open refused (%s): /proc fallback",
                 n_events ? strerror(events[0].err) : "no events requested");
    } else {
        snprintf(mode_reason, sizeof mode_reason, "perf_event counters opened with inherit=1 in Agent_OnLoad");
    }
}

static void JNICALL vm_death(jvmtiEnv *jvmti, JNIEnv *env) {
    (void)jvmti; (void)env;
    pthread_mutex_lock(&lock);
    int w = written;
    pthread_mutex_unlock(&lock);
    if (!w && out_path[0]) {
        /* No timed iteration was marked: record that, so the caller does not read a stale file. */
        FILE *f = fopen(out_path, "w");
        if (f) { fprintf(f, "{\"agent\":\"mobmem_agent\",\"version\":1,\"window\":\"none\"}\n"); fclose(f); }
    }
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
    (void)reserved;
    parse_options(options);
    jvmtiEnv *jvmti = NULL;
    if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || !jvmti) {
        fprintf(stderr, "mobmem_agent: no JVMTI environment\n");
        return JNI_ERR;
    }
    jvmtiCapabilities caps;
    memset(&caps, 0, sizeof caps);
    caps.can_generate_garbage_collection_events = 1;
    if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
        fprintf(stderr, "mobmem_agent: cannot get GC event capability\n");
        return JNI_ERR;
    }
    jvmtiEventCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.GarbageCollectionStart = gc_start;
    cb.GarbageCollectionFinish = gc_finish;
    cb.VMDeath = vm_death;
    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_START, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
    return JNI_OK;
}
