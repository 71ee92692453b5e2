// A stand-in for libnvidia-ml.so.1: the NVML symbols the gpu_mem receiver calls, answering
// from a scenario file that the test writes and rewrites while the collector runs.
//
// Compiled by the tests (fakenvml.go) against the nvml.h of the go-nvml version in go.mod,
// so every struct layout is the one go-nvml passes. The scenario is a text file of
// key=value lines named by $FAKENVML_SCENARIO, re-read on every call; a key that is
// missing makes the call answer NVML_ERROR_NOT_SUPPORTED. Keys (i = GPU index, j = MIG
// device index):
//
//   driver_version, gpu_count
//   gpu.i.uuid, .name, .serial, .bus_id, .minor
//   gpu.i.mem.total, .free, .used                  nvmlDeviceGetMemoryInfo
//   gpu.i.mem2.total, .reserved, .free, .used      nvmlDeviceGetMemoryInfo_v2
//   gpu.i.util.gpu, .memory                        nvmlDeviceGetUtilizationRates
//   gpu.i.procs.compute, .graphics                 "pid:bytes pid:bytes ..."
//   gpu.i.putil                                    "pid:sm:mem ..." nvmlDeviceGetProcessUtilization
//   gpu.i.retired.sbe, .dbe, .pending              page retirement
//   gpu.i.remap                                    "corrected uncorrected pending failed"
//   gpu.i.ecc.mode, .corrected, .uncorrected       ECC
//   gpu.i.persistence, gpu.i.compute_mode
//   gpu.i.mig.mode, gpu.i.mig.count                MIG mode, max MIG devices
//   gpu.i.mig.j.uuid, .name, .gi, .ci, .mem2.total, .mem2.used, .procs.compute
//   gpu.i.mig.j.gi_profile, .placement             nvmlGpuInstanceGetInfo of its GPU instance
//                                                  (absent: NO_PERMISSION, as unprivileged)
//   gpu.i.ret.CALL (or gpu.i.mig.j.ret.CALL)       an nvmlReturn_t number CALL answers
//   gpu.i.ret.all                                  what every call on the GPU answers (15: lost)
//   xid.N = "gpu code [gi ci]"                     the N-th Xid event (N from 1), delivered
//                                                  to event sets created before it was written;
//                                                  gi ci: the MIG instance it names
//
// With $FAKENVML_HOST_PROC set (a procfs of the host's PID namespace that stays reachable
// inside a child namespace, e.g. one mounted before `unshare --pid --fork --mount-proc`), the
// scenario's pids are host pids and the library answers as the NVIDIA driver does since
// 535.113.01: each pid translated into the calling process's PID namespace, and a process
// the caller cannot see left out (NVIDIA/open-gpu-kernel-modules, gpu_rmapi.c _gpuConvertPid,
// os-interface.c os_find_ns_pid: pid_vnr, NV_ERR_OBJECT_NOT_FOUND skips the process).
//
// $FAKENVML_DEVICE_FILE, when set, is opened on the first nvmlInit and closed on the last
// nvmlShutdown, as the driver's device files are: a test sees whether the collector holds it.
//
// Variants drop symbols to stand for older drivers: -DFAKENVML_NO_MEMORY_V2 (before R510),
// -DFAKENVML_NO_PROCS_V3 (before R510), -DFAKENVML_NO_PROCS_V2, -DFAKENVML_NO_REMAPPED_ROWS,
// -DFAKENVML_NO_MIG, -DFAKENVML_NO_PROCESS_UTILIZATION.

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nvml.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_GPUS 8
#define MAX_MIG 7
#define MAX_FILE (1 << 20)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char scenario[MAX_FILE];
static int initialised;
static int deviceFD = -1; // $FAKENVML_DEVICE_FILE while initialised

// One handle per GPU and per MIG slot: slot 0 is the GPU itself, slot j+1 its MIG device j.
struct nvmlDevice_st {
	int gpu;
	int mig; // -1 for the GPU itself
};
static struct nvmlDevice_st handles[MAX_GPUS][MAX_MIG + 1];

#ifndef FAKENVML_NO_MIG
// A GPU instance handle names the MIG slot whose gi it is.
struct nvmlGpuInstance_st {
	struct nvmlDevice_st *mig;
};
static struct nvmlGpuInstance_st gpuInstances[MAX_GPUS][MAX_MIG];
#endif

struct nvmlEventSet_st {
	unsigned long long mask[MAX_GPUS];
	int delivered; // the last xid.N handed out
};

// load re-reads the scenario; the caller holds mu.
static void load(void) {
	scenario[0] = '\n';
	scenario[1] = 0;
	const char *path = getenv("FAKENVML_SCENARIO");
	if (!path)
		return;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	size_t n = fread(scenario + 1, 1, MAX_FILE - 3, f);
	fclose(f);
	scenario[n + 1] = '\n';
	scenario[n + 2] = 0;
}

// get copies the value of key into out; 0 when the key is absent.
static int get(const char *key, char *out, size_t size) {
	char pat[256];
	snprintf(pat, sizeof pat, "\n%s=", key);
	const char *p = strstr(scenario, pat);
	if (!p)
		return 0;
	p += strlen(pat);
	size_t i = 0;
	while (p[i] && p[i] != '\n' && i + 1 < size) {
		out[i] = p[i];
		i++;
	}
	out[i] = 0;
	return 1;
}

static int getu(const char *key, unsigned long long *v) {
	char buf[64];
	if (!get(key, buf, sizeof buf))
		return 0;
	*v = strtoull(buf, NULL, 10);
	return 1;
}

// prefix is "gpu.i" or "gpu.i.mig.j".
static void prefix(struct nvmlDevice_st *d, char *out, size_t size) {
	if (d->mig < 0)
		snprintf(out, size, "gpu.%d", d->gpu);
	else
		snprintf(out, size, "gpu.%d.mig.%d", d->gpu, d->mig);
}

static int dget(struct nvmlDevice_st *d, const char *field, char *out, size_t size) {
	char key[128], p[64];
	prefix(d, p, sizeof p);
	snprintf(key, sizeof key, "%s.%s", p, field);
	return get(key, out, size);
}

static int dgetu(struct nvmlDevice_st *d, const char *field, unsigned long long *v) {
	char buf[64];
	if (!dget(d, field, buf, sizeof buf))
		return 0;
	*v = strtoull(buf, NULL, 10);
	return 1;
}

// begin locks, re-reads the scenario and checks the device; it answers what the call must
// return instead of running (a forced return code), or NVML_SUCCESS to go on.
static nvmlReturn_t begin(nvmlDevice_t dev, const char *call) {
	pthread_mutex_lock(&mu);
	load();
	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	struct nvmlDevice_st *d = dev.handle;
	if (!d)
		return NVML_ERROR_INVALID_ARGUMENT;
	unsigned long long v;
	char key[64];
	snprintf(key, sizeof key, "gpu.%d.ret.all", d->gpu);
	if (getu(key, &v))
		return (nvmlReturn_t)v;
	snprintf(key, sizeof key, "ret.%s", call);
	if (dgetu(d, key, &v))
		return (nvmlReturn_t)v;
	return NVML_SUCCESS;
}

static nvmlReturn_t end(nvmlReturn_t r) {
	pthread_mutex_unlock(&mu);
	return r;
}

#define BEGIN(dev, call)                         \
	nvmlReturn_t forced_ = begin((dev), (call)); \
	struct nvmlDevice_st *d = (dev).handle;      \
	(void)d;                                     \
	if (forced_ != NVML_SUCCESS)                 \
	return end(forced_)

static nvmlReturn_t str(struct nvmlDevice_st *d, const char *field, char *out, unsigned int len) {
	char buf[256];
	if (!dget(d, field, buf, sizeof buf))
		return end(NVML_ERROR_NOT_SUPPORTED);
	if (strlen(buf) + 1 > len)
		return end(NVML_ERROR_INSUFFICIENT_SIZE);
	strcpy(out, buf);
	return end(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlInit_v2(void) {
	pthread_mutex_lock(&mu);
	load();
	char buf[16];
	if (get("init", buf, sizeof buf) && atoi(buf) != 0) {
		int r = atoi(buf);
		pthread_mutex_unlock(&mu);
		return (nvmlReturn_t)r;
	}
	for (int g = 0; g < MAX_GPUS; g++)
		for (int m = 0; m <= MAX_MIG; m++)
			handles[g][m] = (struct nvmlDevice_st){g, m - 1};
	// The real library opens /dev/nvidiactl and the GPUs' device files on the first init
	// and closes them on the last shutdown: $FAKENVML_DEVICE_FILE stands for them.
	const char *devfile = getenv("FAKENVML_DEVICE_FILE");
	if (initialised == 0 && devfile && *devfile && deviceFD < 0)
		deviceFD = open(devfile, O_RDONLY | O_CLOEXEC);
	initialised++;
	pthread_mutex_unlock(&mu);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }

EXPORT nvmlReturn_t nvmlShutdown(void) {
	pthread_mutex_lock(&mu);
	nvmlReturn_t r = NVML_ERROR_UNINITIALIZED;
	if (initialised > 0) {
		initialised--;
		if (initialised == 0 && deviceFD >= 0) {
			close(deviceFD);
			deviceFD = -1;
		}
		r = NVML_SUCCESS;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t r) {
	switch (r) {
	case NVML_SUCCESS:
		return "Success";
	case NVML_ERROR_UNINITIALIZED:
		return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT:
		return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED:
		return "Not Supported";
	case NVML_ERROR_NO_PERMISSION:
		return "Insufficient Permissions";
	case NVML_ERROR_NOT_FOUND:
		return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE:
		return "Insufficient Size";
	case NVML_ERROR_TIMEOUT:
		return "Timeout";
	case NVML_ERROR_GPU_IS_LOST:
		return "GPU is lost";
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded";
	default:
		return "Unknown Error";
	}
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
	pthread_mutex_lock(&mu);
	load();
	char buf[96];
	if (!initialised)
		return end(NVML_ERROR_UNINITIALIZED);
	if (!get("driver_version", buf, sizeof buf))
		return end(NVML_ERROR_NOT_SUPPORTED);
	if (strlen(buf) + 1 > length)
		return end(NVML_ERROR_INSUFFICIENT_SIZE);
	strcpy(version, buf);
	return end(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
	pthread_mutex_lock(&mu);
	load();
	unsigned long long n = 0;
	if (!initialised)
		return end(NVML_ERROR_UNINITIALIZED);
	getu("gpu_count", &n);
	*count = n > MAX_GPUS ? MAX_GPUS : (unsigned int)n;
	return end(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
	pthread_mutex_lock(&mu);
	load();
	unsigned long long n = 0, v;
	char key[64];
	if (!initialised)
		return end(NVML_ERROR_UNINITIALIZED);
	getu("gpu_count", &n);
	if (index >= n || index >= MAX_GPUS)
		return end(NVML_ERROR_INVALID_ARGUMENT);
	snprintf(key, sizeof key, "gpu.%u.ret.all", index);
	if (getu(key, &v))
		return end((nvmlReturn_t)v);
	device->handle = &handles[index][0];
	return end(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *out, unsigned int len) {
	BEGIN(dev, "uuid");
	return str(d, "uuid", out, len);
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *out, unsigned int len) {
	BEGIN(dev, "name");
	return str(d, "name", out, len);
}

EXPORT nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t dev, char *out, unsigned int len) {
	BEGIN(dev, "serial");
	return str(d, "serial", out, len);
}

EXPORT nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t dev, char *out, unsigned int len) {
	BEGIN(dev, "vbios");
	return str(d, "vbios", out, len);
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t *pci) {
	BEGIN(dev, "pci");
	char buf[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
	if (!dget(d, "bus_id", buf, sizeof buf))
		return end(NVML_ERROR_NOT_SUPPORTED);
	memset(pci, 0, sizeof *pci);
	memcpy(pci->busId, buf, sizeof buf);
	// The legacy form drops the domain's upper four digits: 0000:3B:00.0.
	strncpy(pci->busIdLegacy, buf + (strlen(buf) > 12 ? 4 : 0), sizeof pci->busIdLegacy - 1);
	unsigned int dom = 0, bus = 0, devno = 0;
	sscanf(buf, "%x:%x:%x", &dom, &bus, &devno);
	pci->domain = dom;
	pci->bus = bus;
	pci->device = devno;
	return end(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t dev, nvmlPciInfo_t *pci) { return nvmlDeviceGetPciInfo_v3(dev, pci); }

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *m) {
	BEGIN(dev, "memory");
	unsigned long long total, free, used;
	if (!dgetu(d, "mem.total", &total) || !dgetu(d, "mem.free", &free) || !dgetu(d, "mem.used", &used))
		return end(NVML_ERROR_NOT_SUPPORTED);
	m->total = total;
	m->free = free;
	m->used = used;
	return end(NVML_SUCCESS);
}

#ifndef FAKENVML_NO_MEMORY_V2
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t *m) {
	BEGIN(dev, "memory_v2");
	if (m->version != nvmlMemory_v2)
		return end(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	unsigned long long total, reserved = 0, free, used;
	if (!dgetu(d, "mem2.total", &total) || !dgetu(d, "mem2.used", &used))
		return end(NVML_ERROR_NOT_SUPPORTED);
	dgetu(d, "mem2.reserved", &reserved);
	if (!dgetu(d, "mem2.free", &free))
		free = total - reserved - used;
	m->total = total;
	m->reserved = reserved;
	m->free = free;
	m->used = used;
	return end(NVML_SUCCESS);
}
#endif

// nspid reads the NSpid line of <proc>/<who>/status: the pid in every namespace from the
// procfs's own down to the process's (Linux fs/proc/array.c). Returns the count, 0 if none.
static int nspid(const char *proc, const char *who, unsigned int *out, int max) {
	char path[512], line[512];
	snprintf(path, sizeof path, "%s/%s/status", proc, who);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int n = 0;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		char *p = line + 6, *end;
		while (n < max) {
			unsigned long v = strtoul(p, &end, 10);
			if (end == p)
				break;
			out[n++] = (unsigned int)v;
			p = end;
		}
		break;
	}
	fclose(f);
	return n;
}

// translate is the host pid as the calling process's namespace numbers it, or 0 when the
// process is not in that namespace or one below it (pid_vnr's answer). The process's
// namespace is walked up with NS_GET_PARENT (linux/nsfs.h) to the caller's level and
// compared with the caller's by inode: a sibling namespace at the same depth is not seen.
static unsigned int translate(const char *hostproc, unsigned int hostpid) {
	unsigned int self[32], p[32];
	int ns = nspid(hostproc, "self", self, 32);
	if (ns == 0)
		return hostpid;
	int depth = ns - 1;
	char who[32], path[512];
	snprintf(who, sizeof who, "%u", hostpid);
	int np = nspid(hostproc, who, p, 32);
	if (np <= depth)
		return 0;
	struct stat me, st;
	snprintf(path, sizeof path, "%s/self/ns/pid", hostproc);
	if (stat(path, &me))
		return 0;
	snprintf(path, sizeof path, "%s/%u/ns/pid", hostproc, hostpid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	for (int i = 0; i < np - 1 - depth; i++) {
		int parent = ioctl(fd, NS_GET_PARENT);
		close(fd);
		if (parent < 0)
			return 0; // EPERM: the parent is outside the caller's namespace
		fd = parent;
	}
	int ok = fstat(fd, &st) == 0 && st.st_ino == me.st_ino && st.st_dev == me.st_dev;
	close(fd);
	return ok ? p[depth] : 0;
}

// visible translates pids[0..n) in place with their bytes, dropping what the caller cannot
// see, when $FAKENVML_HOST_PROC is set; returns the new count.
static unsigned int visible(unsigned int *pids, unsigned long long *bytes, unsigned int n) {
	const char *hostproc = getenv("FAKENVML_HOST_PROC");
	if (!hostproc || !*hostproc)
		return n;
	unsigned int k = 0;
	for (unsigned int i = 0; i < n; i++) {
		unsigned int pid = translate(hostproc, pids[i]);
		if (!pid)
			continue;
		pids[k] = pid;
		if (bytes)
			bytes[k] = bytes[i];
		k++;
	}
	return k;
}

// procs fills infos from "pid:bytes ..." of field; each element is size bytes and starts
// with the v1 fields (pid, usedGpuMemory); with mig, v2's instance ids follow.
static nvmlReturn_t procs(struct nvmlDevice_st *d, const char *field, unsigned int *count, void *infos, size_t size, int mig) {
	char buf[4096];
	if (!dget(d, field, buf, sizeof buf))
		buf[0] = 0;
	unsigned int n = 0;
	unsigned int pids[256];
	unsigned long long bytes[256];
	for (char *tok = strtok(buf, " "); tok && n < 256; tok = strtok(NULL, " ")) {
		if (sscanf(tok, "%u:%llu", &pids[n], &bytes[n]) == 2)
			n++;
	}
	n = visible(pids, bytes, n);
	if (*count < n || (n > 0 && !infos)) {
		*count = n;
		return end(NVML_ERROR_INSUFFICIENT_SIZE);
	}
	unsigned long long gi = 0xFFFFFFFF, ci = 0xFFFFFFFF;
	if (d->mig >= 0) {
		dgetu(d, "gi", &gi);
		dgetu(d, "ci", &ci);
	}
	for (unsigned int i = 0; i < n; i++) {
		char *e = (char *)infos + i * size;
		memset(e, 0, size);
		nvmlProcessInfo_v1_t *p = (nvmlProcessInfo_v1_t *)e;
		p->pid = pids[i];
		p->usedGpuMemory = bytes[i];
		if (mig) {
			nvmlProcessInfo_t *q = (nvmlProcessInfo_t *)e;
			q->gpuInstanceId = (unsigned int)gi;
			q->computeInstanceId = (unsigned int)ci;
		}
	}
	*count = n;
	return end(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t dev, unsigned int *count, nvmlProcessInfo_v1_t *infos) {
	BEGIN(dev, "compute");
	return procs(d, "procs.compute", count, infos, sizeof *infos, 0);
}

EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t dev, unsigned int *count, nvmlProcessInfo_v1_t *infos) {
	BEGIN(dev, "graphics");
	return procs(d, "procs.graphics", count, infos, sizeof *infos, 0);
}

#ifndef FAKENVML_NO_PROCS_V2
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t dev, unsigned int *count, nvmlProcessInfo_v2_t *infos) {
	BEGIN(dev, "compute");
	return procs(d, "procs.compute", count, infos, sizeof *infos, 1);
}

EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t dev, unsigned int *count, nvmlProcessInfo_v2_t *infos) {
	BEGIN(dev, "graphics");
	return procs(d, "procs.graphics", count, infos, sizeof *infos, 1);
}
#endif

#ifndef FAKENVML_NO_PROCS_V3
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev, unsigned int *count, nvmlProcessInfo_t *infos) {
	BEGIN(dev, "compute");
	return procs(d, "procs.compute", count, infos, sizeof *infos, 1);
}

EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t dev, unsigned int *count, nvmlProcessInfo_t *infos) {
	BEGIN(dev, "graphics");
	return procs(d, "procs.graphics", count, infos, sizeof *infos, 1);
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t dev, nvmlUtilization_t *u) {
	BEGIN(dev, "utilization");
	unsigned long long gpu, mem = 0;
	if (!dgetu(d, "util.gpu", &gpu))
		return end(NVML_ERROR_NOT_SUPPORTED);
	dgetu(d, "util.memory", &mem);
	u->gpu = (unsigned int)gpu;
	u->memory = (unsigned int)mem;
	return end(NVML_SUCCESS);
}

#ifndef FAKENVML_NO_PROCESS_UTILIZATION
EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t dev, nvmlProcessUtilizationSample_t *samples, unsigned int *count, unsigned long long lastSeen) {
	(void)lastSeen;
	BEGIN(dev, "process_utilization");
	char buf[4096];
	if (!dget(d, "putil", buf, sizeof buf))
		return end(NVML_ERROR_NOT_SUPPORTED);
	unsigned int n = 0, pid[256], sm[256], mem[256];
	for (char *tok = strtok(buf, " "); tok && n < 256; tok = strtok(NULL, " ")) {
		if (sscanf(tok, "%u:%u:%u", &pid[n], &sm[n], &mem[n]) == 3)
			n++;
	}
	if (!samples || *count < n) {
		*count = n;
		return end(NVML_ERROR_INSUFFICIENT_SIZE);
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	for (unsigned int i = 0; i < n; i++) {
		memset(&samples[i], 0, sizeof samples[i]);
		samples[i].pid = pid[i];
		samples[i].smUtil = sm[i];
		samples[i].memUtil = mem[i];
		samples[i].timeStamp = (unsigned long long)ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
	}
	*count = n;
	return end(NVML_SUCCESS);
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t dev, nvmlEnableState_t *mode) {
	BEGIN(dev, "persistence");
	unsigned long long v;
	if (!dgetu(d, "persistence", &v))
		return end(NVML_ERROR_NOT_SUPPORTED);
	*mode = v ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return end(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t dev, nvmlComputeMode_t *mode) {
	BEGIN(dev, "compute_mode");
	unsigned long long v;
	if (!dgetu(d, "compute_mode", &v))
		return end(NVML_ERROR_NOT_SUPPORTED);
	*mode = (nvmlComputeMode_t)v;
	return end(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t dev, nvmlPageRetirementCause_t cause, unsigned int *count, unsigned long long *addresses) {
	BEGIN(dev, "retired_pages");
	unsigned long long n;
	const char *field = cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR ? "retired.dbe" : "retired.sbe";
	if (!dgetu(d, field, &n))
		return end(NVML_ERROR_NOT_SUPPORTED);
	if (*count < n) {
		*count = (unsigned int)n;
		return end(NVML_ERROR_INSUFFICIENT_SIZE);
	}
	for (unsigned long long i = 0; i < n; i++)
		addresses[i] = 0x1000 * (i + 1);
	*count = (unsigned int)n;
	return end(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t dev, nvmlEnableState_t *pending) {
	BEGIN(dev, "retired_pending");
	unsigned long long v;
	if (!dgetu(d, "retired.pending", &v))
		return end(NVML_ERROR_NOT_SUPPORTED);
	*pending = v ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return end(NVML_SUCCESS);
}

#ifndef FAKENVML_NO_REMAPPED_ROWS
EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t dev, unsigned int *corr, unsigned int *unc, unsigned int *pending, unsigned int *failed) {
	BEGIN(dev, "remapped_rows");
	char buf[128];
	if (!dget(d, "remap", buf, sizeof buf))
		return end(NVML_ERROR_NOT_SUPPORTED);
	if (sscanf(buf, "%u %u %u %u", corr, unc, pending, failed) != 4)
		return end(NVML_ERROR_UNKNOWN);
	return end(NVML_SUCCESS);
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t dev, nvmlEnableState_t *current, nvmlEnableState_t *pending) {
	BEGIN(dev, "ecc_mode");
	unsigned long long v;
	if (!dgetu(d, "ecc.mode", &v))
		return end(NVML_ERROR_NOT_SUPPORTED);
	*current = *pending = v ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return end(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t dev, nvmlMemoryErrorType_t type, nvmlEccCounterType_t counter, unsigned long long *n) {
	(void)counter;
	BEGIN(dev, "ecc_errors");
	if (!dgetu(d, type == NVML_MEMORY_ERROR_TYPE_CORRECTED ? "ecc.corrected" : "ecc.uncorrected", n))
		return end(NVML_ERROR_NOT_SUPPORTED);
	return end(NVML_SUCCESS);
}

#ifndef FAKENVML_NO_MIG
EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int *current, unsigned int *pending) {
	BEGIN(dev, "mig_mode");
	unsigned long long v;
	if (!dgetu(d, "mig.mode", &v))
		return end(NVML_ERROR_NOT_SUPPORTED);
	*current = *pending = (unsigned int)v;
	return end(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t dev, unsigned int *count) {
	BEGIN(dev, "mig_count");
	unsigned long long mode = 0, n = 0;
	dgetu(d, "mig.mode", &mode);
	if (mode)
		dgetu(d, "mig.count", &n);
	*count = (unsigned int)(n > MAX_MIG ? MAX_MIG : n);
	return end(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t dev, unsigned int index, nvmlDevice_t *mig) {
	BEGIN(dev, "mig_handle");
	unsigned long long mode = 0;
	char key[64], buf[128];
	dgetu(d, "mig.mode", &mode);
	if (!mode || index >= MAX_MIG)
		return end(NVML_ERROR_INVALID_ARGUMENT);
	snprintf(key, sizeof key, "mig.%u.uuid", index);
	if (!dget(d, key, buf, sizeof buf))
		return end(NVML_ERROR_NOT_FOUND);
	mig->handle = &handles[d->gpu][index + 1];
	return end(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t dev, unsigned int *id) {
	BEGIN(dev, "gi");
	unsigned long long v;
	if (d->mig < 0 || !dgetu(d, "gi", &v))
		return end(NVML_ERROR_NOT_SUPPORTED);
	*id = (unsigned int)v;
	return end(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t dev, unsigned int *id) {
	BEGIN(dev, "ci");
	unsigned long long v;
	if (d->mig < 0 || !dgetu(d, "ci", &v))
		return end(NVML_ERROR_NOT_SUPPORTED);
	*id = (unsigned int)v;
	return end(NVML_SUCCESS);
}

// nvmlDeviceGetGpuInstanceById finds the MIG slot of the GPU whose gi is id.
EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t dev, unsigned int id, nvmlGpuInstance_t *gi) {
	BEGIN(dev, "gi_by_id");
	unsigned long long mode = 0, v;
	char key[64];
	if (d->mig >= 0)
		return end(NVML_ERROR_INVALID_ARGUMENT);
	dgetu(d, "mig.mode", &mode);
	if (!mode)
		return end(NVML_ERROR_NOT_SUPPORTED);
	for (int j = 0; j < MAX_MIG; j++) {
		snprintf(key, sizeof key, "mig.%d.gi", j);
		if (!dgetu(d, key, &v) || v != id)
			continue;
		snprintf(key, sizeof key, "mig.%d.gi_profile", j);
		if (!dgetu(d, key, &v))
			return end(NVML_ERROR_NO_PERMISSION);
		gpuInstances[d->gpu][j].mig = &handles[d->gpu][j + 1];
		gi->handle = &gpuInstances[d->gpu][j];
		return end(NVML_SUCCESS);
	}
	return end(NVML_ERROR_NOT_FOUND);
}

EXPORT nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t *info) {
	struct nvmlGpuInstance_st *g = gi.handle;
	if (!g || !g->mig)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlDevice_t dev = {g->mig};
	BEGIN(dev, "gi_info");
	unsigned long long id = 0, profile = 0, start = 0;
	if (!dgetu(d, "gi", &id) || !dgetu(d, "gi_profile", &profile) || !dgetu(d, "placement", &start))
		return end(NVML_ERROR_NO_PERMISSION);
	memset(info, 0, sizeof *info);
	info->device = (nvmlDevice_t){&handles[d->gpu][0]};
	info->id = (unsigned int)id;
	info->profileId = (unsigned int)profile;
	info->placement.start = (unsigned int)start;
	info->placement.size = 1;
	return end(NVML_SUCCESS);
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t dev, unsigned int *minor) {
	BEGIN(dev, "minor");
	unsigned long long v;
	if (d->mig >= 0 || !dgetu(d, "minor", &v))
		return end(NVML_ERROR_NOT_SUPPORTED);
	*minor = (unsigned int)v;
	return end(NVML_SUCCESS);
}

// lastXid is the highest N with an xid.N key.
static int lastXid(void) {
	int n = 0;
	char key[32], buf[64];
	for (;;) {
		snprintf(key, sizeof key, "xid.%d", n + 1);
		if (!get(key, buf, sizeof buf))
			return n;
		n++;
	}
}

EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set) {
	pthread_mutex_lock(&mu);
	load();
	if (!initialised)
		return end(NVML_ERROR_UNINITIALIZED);
	struct nvmlEventSet_st *s = calloc(1, sizeof *s);
	s->delivered = lastXid();
	set->handle = s;
	return end(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t dev, unsigned long long *types) {
	BEGIN(dev, "event_types");
	*types = nvmlEventTypeXidCriticalError | nvmlEventTypeSingleBitEccError | nvmlEventTypeDoubleBitEccError;
	return end(NVML_SUCCESS);
}

EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t dev, unsigned long long types, nvmlEventSet_t set) {
	BEGIN(dev, "register_events");
	if (!set.handle || d->mig >= 0)
		return end(NVML_ERROR_INVALID_ARGUMENT);
	set.handle->mask[d->gpu] |= types;
	return end(NVML_SUCCESS);
}

// next hands out the next Xid written after the set was created, for a registered GPU.
static int next(struct nvmlEventSet_st *s, nvmlEventData_t *data) {
	char key[32], buf[64];
	for (;;) {
		snprintf(key, sizeof key, "xid.%d", s->delivered + 1);
		if (!get(key, buf, sizeof buf))
			return 0;
		s->delivered++;
		unsigned int gpu, code, gi = 0xFFFFFFFF, ci = 0xFFFFFFFF;
		if (sscanf(buf, "%u %u %u %u", &gpu, &code, &gi, &ci) < 2 || gpu >= MAX_GPUS)
			continue;
		if (!(s->mask[gpu] & nvmlEventTypeXidCriticalError))
			continue;
		memset(data, 0, sizeof *data);
		data->device.handle = &handles[gpu][0];
		data->eventType = nvmlEventTypeXidCriticalError;
		data->eventData = code;
		data->gpuInstanceId = gi;
		data->computeInstanceId = ci;
		return 1;
	}
}

EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms) {
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		pthread_mutex_lock(&mu);
		load();
		if (!initialised)
			return end(NVML_ERROR_UNINITIALIZED);
		if (!set.handle)
			return end(NVML_ERROR_INVALID_ARGUMENT);
		if (next(set.handle, data))
			return end(NVML_SUCCESS);
		pthread_mutex_unlock(&mu);
		clock_gettime(CLOCK_MONOTONIC, &now);
		long ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
		if (ms >= (long)timeoutms)
			return NVML_ERROR_TIMEOUT;
		usleep(20000);
	}
}

EXPORT nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms) {
	return nvmlEventSetWait_v2(set, data, timeoutms);
}

EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
	free(set.handle);
	return NVML_SUCCESS;
}
