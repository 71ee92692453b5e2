package classify

import (
	"math"
	"strconv"
	"strings"
)

// facts is the view of the inputs every rule reads: the inputs themselves plus the values
// more than one rule derives (capacity, free memory, the failing process, the usage fit),
// computed once per Classify.
type facts struct {
	oom OOM
	gpu *GPUState // nil when no GPU was matched
	th  *Thresholds

	dropped []string // impossible values sanitize left out, for the evidence

	total     int64    // capacity: the GPU's total, else the message's; -1 unknown
	free      int64    // free at the failure: the message's, else the GPU's; -1 unknown
	failing   *Process // the failing process among gpu.Processes; nil unknown
	failingBy string   // how failing was found: "pid", "bytes", ""

	leak leakFit // the steadiness fit of the failing process's series, else the GPU's usage

	forecast *Prediction // the receiver's forecast of this OOM (rule_prediction.go); nil none
	// notForecast says why a forecast naming the failing pid was about another process.
	notForecast string
}

// verdict is one rule's answer.
type verdict struct {
	holds    bool
	evidence string // one sentence, no trailing period
	// complete: the rule had every number it uses; false lowers the confidence.
	complete bool
	// fromMessage: the rule decided on the message's numbers alone, so how (or whether)
	// the GPU was matched and how fresh its sample was do not weaken it.
	fromMessage bool
	// explains is how much memory the cause took from the failed request (bytes): when
	// several rules hold, the one explaining the most is the cause (see Classify).
	explains int64
}

// rule is one row of the causes table.
type rule struct {
	cause string
	check func(*facts) verdict
}

// rules is the causes table of docs/causes.md, in order. A fault holds first whenever it
// holds; among the others, the one that explains the most memory is the cause.
var rules = [...]rule{
	{CauseGPUFault, ruleGPUFault},
	{CauseZombieContext, ruleZombieContext},
	{CauseOtherTenant, ruleOtherTenant},
	{CauseWorkerContextOverhead, ruleWorkerContextOverhead},
	{CauseFragmentation, ruleFragmentation},
	{CauseMemoryLeak, ruleMemoryLeak},
	{CauseCapacityLoss, ruleCapacityLoss},
	{CauseWorkloadTooLarge, ruleWorkloadTooLarge},
}

// Classify decides the cause of one OOM. gpu may be nil. It never panics: numbers the
// message or the window did not know are -1 and make the rules that need them abstain.
func Classify(oom OOM, gpu *GPUState, th Thresholds) Result {
	f := newFacts(oom, gpu, &th)
	var res Result
	var held [len(rules)]verdict
	primary := -1
	for i := range rules {
		v := rules[i].check(f)
		if !v.holds {
			continue
		}
		held[i] = v
		// A fault makes capacity irrelevant: it stays the cause. Otherwise the larger
		// explanation wins, and table order breaks ties (strictly greater replaces).
		if primary < 0 || (rules[primary].cause != CauseGPUFault && v.explains > held[primary].explains) {
			primary = i
		}
	}
	var decided verdict
	for i := range rules {
		switch {
		case !held[i].holds:
		case i == primary:
			res.Cause, decided = rules[i].cause, held[i]
		default:
			res.Contributing = append(res.Contributing, rules[i].cause)
		}
	}
	if res.Cause == "" {
		res.Cause = CauseUnknown
		res.Confidence = ConfidenceLow
		res.Evidence = sentence(strings.TrimSuffix(unknownEvidence(f), ".") + droppedClause(f))
		res.Recommendation = recommend(CauseUnknown, f)
		return res
	}
	res.Confidence = confidence(f, decided)
	res.Evidence = sentence(decided.evidence + droppedClause(f) + unmatchedClause(f) + notForecastClause(f))
	res.Recommendation = recommend(res.Cause, f)
	return res
}

func newFacts(oom OOM, gpu *GPUState, th *Thresholds) *facts {
	oom, gpu, dropped := sanitize(oom, gpu)
	f := &facts{oom: oom, gpu: gpu, th: th, total: -1, free: -1, dropped: dropped}
	switch {
	case gpu != nil && gpu.Total > 0:
		// The GPU's own total is the MIG instance's when the OOM ran in one.
		f.total = gpu.Total
	case oom.TotalBytes > 0:
		f.total = oom.TotalBytes
	}
	switch {
	case oom.FreeBytes >= 0:
		// The framework's free was read at the failure; the sample may be a second old.
		f.free = oom.FreeBytes
	case gpu != nil && gpu.Free >= 0:
		f.free = gpu.Free
	}
	f.failing, f.failingBy = findFailing(oom, gpu, th)
	sanitizeFailing(f)
	f.leak = fitLeak(f)
	if gpu != nil && len(gpu.Predictions) > 0 {
		f.forecast, f.notForecast = findForecast(f)
	}
	return f
}

// findFailing finds the failing process among the GPU's processes: by pid, else by the
// message's own process total. A pid from a message written inside a container is in the
// container's pid namespace while NVML lists host pids, so an unlisted pid says nothing
// about whether the failing process is listed under another pid.
func findFailing(oom OOM, gpu *GPUState, th *Thresholds) (*Process, string) {
	if gpu == nil {
		return nil, ""
	}
	if oom.PID > 0 {
		for i := range gpu.Processes {
			if gpu.Processes[i].PID == oom.PID {
				return &gpu.Processes[i], "pid"
			}
		}
	}
	if oom.ProcessBytes <= 0 {
		return nil, ""
	}
	tol := math.Max(float64(64*mib), th.ProcessBytesTolerance*float64(oom.ProcessBytes))
	var match *Process
	n := 0
	for i := range gpu.Processes {
		p := &gpu.Processes[i]
		if math.Abs(float64(p.Bytes)-float64(oom.ProcessBytes)) <= tol {
			match, n = p, n+1
		}
	}
	if n != 1 {
		return nil, "" // ambiguous: two processes of the same size
	}
	return match, "bytes"
}

// unknownEvidence says what was missing when no rule held.
func unknownEvidence(f *facts) string {
	var missing []string
	if f.gpu == nil {
		missing = append(missing, noGPUClause(f.oom))
	} else {
		if len(f.gpu.Usage) == 0 {
			missing = append(missing, "no memory history for "+gpuName(f.gpu))
		}
		if len(f.gpu.Processes) == 0 {
			missing = append(missing, "no per-process memory")
		}
		if f.gpu.Used < 0 {
			missing = append(missing, "no used-memory sample")
		}
	}
	if f.oom.RequestedBytes < 0 {
		missing = append(missing, "the message gave no request size")
	}
	if f.oom.ReservedBytes < 0 || f.oom.AllocatedBytes < 0 {
		missing = append(missing, "the message gave no allocator numbers")
	}
	if f.total < 0 {
		missing = append(missing, "the GPU's capacity is unknown")
	}
	if len(missing) == 0 {
		return sentence("No rule held: " + gpuName(f.gpu) + " had " + humanBytes(f.free) + " free of " +
			humanBytes(f.total) + " with no fault, unattributed memory, other tenant, fragmentation, ramp or capacity loss" +
			shortfallClause(f))
	}
	return sentence("Too little data to tell: " + strings.Join(missing, ", "))
}

// droppedClause names the impossible values left out, so that a reader sees why a number
// they expected did not count.
func droppedClause(f *facts) string {
	if len(f.dropped) == 0 {
		return ""
	}
	return "; ignored as impossible: " + strings.Join(f.dropped, ", ")
}

// notForecastClause says why a forecast that named the failing pid did not count.
func notForecastClause(f *facts) string {
	if f.notForecast == "" {
		return ""
	}
	return "; the gpu_mem receiver's forecast for pid " + strconv.Itoa(f.failing.PID) + " did not count: " + f.notForecast
}

// unmatchedClause says, for a cause decided without a GPU, that none was matched and why: a
// reader must not take a cause read from the message alone for one checked against metrics.
func unmatchedClause(f *facts) string {
	if f.gpu != nil {
		return ""
	}
	return "; no GPU was matched (" + noGPUClause(f.oom) + "), so only the message's own numbers were checked"
}

// noGPUClause says precisely why no GPU was matched.
func noGPUClause(o OOM) string {
	host := "host " + strconv.Quote(o.NoGPU.Host)
	if o.NoGPU.Host == "" {
		host = "records without host.name"
	}
	switch o.NoGPU.Reason {
	case NoGPUNoMetricsPipeline:
		return "no GPU metrics at all (the processor is in no metrics pipeline)"
	case NoGPUNoHostMetrics:
		return "no GPU metrics have arrived for " + host
	case NoGPUMetricsTooOld:
		return "the newest GPU metrics of " + host + " are more than " + o.NoGPU.Window.String() + " older than the OOM"
	case NoGPUBeforeWindow:
		return "the OOM's time is more than " + o.NoGPU.Window.String() + " before the newest GPU metrics of " + host +
			": the window no longer holds that moment, as for a late or replayed record or a log clock behind"
	case NoGPUNotMatched:
		s := "no GPU of " + host + " matched the OOM: "
		if o.PID >= 0 {
			s += "pid " + strconv.Itoa(o.PID) + " was not seen on exactly one of its GPUs"
		} else {
			s += "the record names no pid"
		}
		s += ", no single GPU was reporting at the OOM's time"
		if o.DeviceIndex >= 0 {
			s += " and none has nvidia.gpu.index " + strconv.Itoa(o.DeviceIndex) + " alone"
		} else {
			s += " and the message gives no device ordinal"
		}
		return s
	}
	return "no GPU metrics matched the OOM"
}

// sentence ends the evidence with a period; rules write it without one so clauses can be
// appended.
func sentence(s string) string {
	if s == "" || strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}
