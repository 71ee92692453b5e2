// Package simnvml is the simulated NVML backend: an nvml.Interface built on
// go-nvml's generated mocks and driven by a scenario (GPUs, processes, memory
// over time, ECC state, Xid events, log lines), so the gpu_mem receiver runs
// the same code against simulated and real devices.
//
// Everything a call answers is derived from the injected clock at the moment
// of the call: scenario time is (now − start) modulo the scenario's duration.
// There is no background state to drift, and tests step a fake clock. The one
// goroutine, started by Start, appends Xid kernel records and application log
// lines to files at their scenario times.
//
// The generated mocks record every call in a growing slice and panic on any
// method left unset. Sim and its devices therefore implement the methods the
// receiver uses directly (no recording, bounded memory for long demos) and
// set every other mock method to answer ERROR_NOT_SUPPORTED.
package simnvml
