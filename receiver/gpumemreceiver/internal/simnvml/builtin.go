package simnvml

import (
	"crypto/sha256"
	"fmt"
	"time"
)

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

// builtinOOM is the PyTorch 2.x message the leaking process on GPU 3 dies
// with. Inside its container GPU 3 is device 0. Capacity is NVML's total
// (81559 MiB = 79.65 GiB); free is what the ramp leaves at 50s.
const builtinOOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. " +
	"GPU 0 has a total capacity of 79.65 GiB of which 1.15 GiB is free. " +
	"Process 43001 has 78.00 GiB memory in use. Of the allocated memory 76.21 GiB is allocated by PyTorch, " +
	"and 1.29 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try " +
	"setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  " +
	"See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"

// BuiltinScenario is the demo scenario, played when no scenario file is
// configured; testdata/scenarios/builtin.yaml is the same scenario in YAML.
// A 60 s loop on a DGX H100 (8 × H100 80GB):
//
//	GPU 0, 1  a two-rank training job (pod llm-train): one 58→62 GiB rank and
//	          four 512 MiB data-loader workers per GPU
//	GPU 2     a fine-tune that hits Xid 31 (MMU fault) at 20 s and dies
//	GPU 3     a leaking embedding server: 6 GiB → 78 GiB over 50 s, then a
//	          PyTorch OOM (log line at 50 s) and exit; compute mode
//	          exclusive_process
//	GPU 4     twelve gunicorn workers of one inference pod, 1.5 GiB each, two
//	          of them busy; persistence mode off
//	GPU 5     6 GiB that no process accounts for (a zombie context)
//	GPU 6     two tenants (a pod and a plain docker container); 2 pages
//	          retired for single-bit errors, a double-bit retirement pending
//	          from 30 s, correctable ECC errors climbing
//	GPU 7     in MIG mode: 3g.40gb (a Triton server), 2g.20gb (a notebook),
//	          1g.10gb (an embedding API, 512 MiB unattributed), 1g.10gb (idle)
func BuiltinScenario() *Scenario {
	idx := func(i int) *int { return &i }
	s := &Scenario{
		Duration:      60 * time.Second,
		DriverVersion: DefaultDriverVersion,
		GPUs:          make([]GPU, 8),
		Events: []Event{{
			At: 20 * time.Second, GPU: 2, Xid: 31, PID: 42001, Name: "python3",
		}},
		LogLines: []LogLine{{At: 50 * time.Second, Path: "embed-server.log", Line: builtinOOM}},
	}
	for i := range s.GPUs {
		s.GPUs[i].Index = idx(i)
	}
	train := workload("llm-train", true)
	for g, rank := range []uint32{41001, 41002} {
		gpu := &s.GPUs[g]
		gpu.Utilization = Const(93)
		gpu.MemoryUtilization = Const(61)
		rankProc := train.proc(rank, "python3", 1,
			StepsOf(Step{At: 0, Value: 58 * gib}, Step{At: 5 * time.Second, Value: 62 * gib}))
		rankProc.SMUtilization, rankProc.MemoryUtilization = Const(93), Const(61)
		gpu.Processes = append(gpu.Processes, rankProc)
		for w := range uint32(4) {
			gpu.Processes = append(gpu.Processes, train.proc(rank+10*(w+1), "pt_data_worker", int(40+w), Const(512*mib)))
		}
	}

	finetune := workload("vision-finetune", true)
	s.GPUs[2].Utilization = StepsOf(Step{At: 0, Value: 71}, Step{At: 21 * time.Second, Value: 0})
	p := finetune.proc(42001, "python3", 1, Const(38*gib))
	p.SMUtilization, p.MemoryUtilization = Const(71), Const(30)
	p.Stop = 21 * time.Second
	s.GPUs[2].Processes = []Process{p}

	embed := workload("embed-server", true)
	s.GPUs[3].Utilization = Const(45)
	s.GPUs[3].ComputeMode = ComputeModeExclusiveProcess
	p = embed.proc(43001, "python3", 1, RampOf(6*gib, 78*gib, 0, 50*time.Second))
	p.SMUtilization, p.MemoryUtilization = Const(45), Const(12)
	p.Stop = 51 * time.Second
	s.GPUs[3].Processes = []Process{p}

	infer := workload("chat-inference", true)
	s.GPUs[4].Utilization = Const(35)
	off := false
	s.GPUs[4].PersistenceMode = &off
	for w := range uint32(12) {
		worker := infer.proc(44001+w, "gunicorn", int(7+w), Const(1536*mib))
		if w < 2 {
			worker.SMUtilization, worker.MemoryUtilization = Const(18), Const(6)
		}
		s.GPUs[4].Processes = append(s.GPUs[4].Processes, worker)
	}

	batch := workload("batch-scoring", true)
	s.GPUs[5].Utilization = Const(60)
	s.GPUs[5].Unattributed = Const(6 * gib)
	p = batch.proc(45001, "python3", 1, Const(70*gib))
	p.SMUtilization, p.MemoryUtilization = Const(60), Const(25)
	s.GPUs[5].Processes = []Process{p}

	notebook := workload("research-notebook", true)
	ollama := workload("ollama", false)
	g6 := &s.GPUs[6]
	g6.Utilization = Const(40)
	g6.Processes = []Process{
		notebook.proc(46001, "python3", 88, Const(24*gib)),
		ollama.proc(46101, "ollama", 1, Const(18*gib)),
	}
	g6.Processes[0].SMUtilization, g6.Processes[0].MemoryUtilization = Const(28), Const(9)
	g6.Processes[1].SMUtilization, g6.Processes[1].MemoryUtilization = Const(12), Const(4)
	g6.RetiredPages = RetiredPages{
		SingleBitECC: Const(2),
		DoubleBitECC: StepsOf(Step{At: 30 * time.Second, Value: 1}),
		Pending:      StepsOf(Step{At: 30 * time.Second, Value: 1}),
	}
	g6.ECCErrors = ECCErrors{Corrected: RampOf(0, 12, 0, 60*time.Second), Uncorrected: StepsOf(Step{At: 30 * time.Second, Value: 1})}

	// GPU 7 is in MIG mode: each instance is its own resource, its processes on it.
	triton := workload("triton", true)
	lab := workload("lab-notebook", true)
	embedAPI := workload("embed-api", true)
	gi := func(id int) *int { return &id }
	s.GPUs[7].MIG = &MIG{Instances: []MIGInstance{
		{Profile: "3g.40gb", GPUInstanceID: gi(2), Processes: []Process{triton.proc(47001, "tritonserver", 1, Const(20*gib))}},
		{Profile: "2g.20gb", GPUInstanceID: gi(3), Processes: []Process{lab.proc(47101, "python3", 1, Const(12*gib))}},
		{Profile: "1g.10gb", GPUInstanceID: gi(9), Unattributed: Const(512 * mib),
			Processes: []Process{embedAPI.proc(47201, "python3", 1, Const(6*gib))}},
		{Profile: "1g.10gb", GPUInstanceID: gi(10)},
	}}

	// Normalize cannot fail on this fixed input (TestBuiltinScenario checks);
	// were it to, New normalizes again and returns the error.
	_ = s.Normalize() // derives the GPU and MIG UUIDs the pods' allocations name
	s.Pods = builtinPods(s)
	_ = s.Normalize()
	return s
}

// builtinPods are the node's pods as the kubelet lists them: each workload above in its pod,
// named the way its controller names pods, with the GPUs (or MIG instances) NVIDIA's device
// plugin allocated to it. Ollama runs outside Kubernetes on GPU 6, which the kubelet gave to
// the notebook: the demo's unexpected consumer.
func builtinPods(s *Scenario) []Pod {
	gpu := func(i int) string { return s.GPUs[i].UUID }
	mig := func(i int) string { return s.GPUs[7].MIG.Instances[i].UUID }
	pod := func(w builtinWorkload, ns, name, container, resource string, ids ...string) Pod {
		return Pod{UID: w.podUID, Name: name, Namespace: ns, Containers: []PodContainer{{
			Name: container, ID: w.containerID, Devices: []PodDevices{{Resource: resource, IDs: ids}},
		}}}
	}
	return []Pod{
		pod(workload("llm-train", true), "training", "llm-train-x7k2p", "trainer", DefaultPodResource, gpu(0), gpu(1)),
		pod(workload("vision-finetune", true), "research", "vision-finetune-q9w4z", "finetune", DefaultPodResource, gpu(2)),
		pod(workload("embed-server", true), "serving", "embed-server-6d8f7c9b5-k2x7w", "server", DefaultPodResource, gpu(3)),
		pod(workload("chat-inference", true), "serving", "chat-inference-5f7d9c8b6-q4z8n", "gunicorn", DefaultPodResource, gpu(4)),
		pod(workload("batch-scoring", true), "batch", "batch-scoring-29412345-m2n4p", "scorer", DefaultPodResource, gpu(5)),
		pod(workload("research-notebook", true), "research", "research-notebook-0", "notebook", DefaultPodResource, gpu(6)),
		pod(workload("triton", true), "serving", "triton-0", "tritonserver", "nvidia.com/mig-3g.40gb", mig(0)),
		pod(workload("lab-notebook", true), "research", "lab-notebook-0", "notebook", "nvidia.com/mig-2g.20gb", mig(1)),
		pod(workload("embed-api", true), "serving", "embed-api-7b9c8d6f5-t5v8x", "api", "nvidia.com/mig-1g.10gb", mig(2)),
	}
}

// builtinWorkload is a container, optionally in a pod, whose IDs are derived
// from its name so they stay the same across builds.
type builtinWorkload struct{ containerID, podUID string }

func workload(name string, inPod bool) builtinWorkload {
	h := sha256.Sum256([]byte("simnvml container " + name))
	w := builtinWorkload{containerID: fmt.Sprintf("%x", h)}
	if inPod {
		u := sha256.Sum256([]byte("simnvml pod " + name))
		w.podUID = fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
	}
	return w
}

func (w builtinWorkload) proc(pid uint32, name string, vpid int, mem Series) Process {
	return Process{PID: pid, Name: name, ContainerID: w.containerID, PodUID: w.podUID, VPID: vpid, Memory: mem}
}
