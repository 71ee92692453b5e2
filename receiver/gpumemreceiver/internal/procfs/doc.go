// Package procfs reads the per-process facts the gpu_mem receiver attaches to
// a GPU process: its executable name (the base name of the /proc/<pid>/exe
// link where it can be read, else /proc/<pid>/comm; never cmdline, which can
// carry secrets), the container and Kubernetes pod it runs in
// (/proc/<pid>/cgroup) and its pid inside its own pid namespace
// (/proc/<pid>/status, NSpid).
//
// The proc tree is an fs.FS so the same code reads the host's /proc,
// a container's /host/proc, or the simulator's in-memory tree. Results are
// cached per pid: the scraper looks the same long-lived processes up every
// scrape, and a pid's cgroup does not change while it holds a GPU context.
package procfs
