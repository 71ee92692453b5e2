package parse

import (
	"reflect"
	"strings"
	"testing"
)

const pytorch2Message = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 2 has a total capacity of 79.15 GiB of which 118.25 MiB is free. Including non-PyTorch memory, this process has 40.10 GiB memory in use. Process 2201 has 20.00 GiB memory in use. Process 2202 has 18.90 GiB memory in use. Of the allocated memory 38.75 GiB is allocated by PyTorch, and 812.40 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"

// megabyteBody is 1 MiB of ordinary log text with a PyTorch OOM at its end.
func megabyteBody() string {
	filler := strings.Repeat("INFO step=1 loss=0.25 lr=3e-4 tokens/s=1200 memory ok\n", (1<<20)/54)
	return filler + pytorch2Message
}

func FuzzParse(f *testing.F) {
	for _, c := range loadCorpus(f) {
		f.Add(c.Text)
	}
	for _, c := range loadCited(f) { // the cited public messages and look-alikes
		f.Add(c.Text)
	}
	f.Add("")
	f.Add("Fix GPU CUDA out of memory error when")               // a repair verb before the phrase
	f.Add("fix\x00 CUDA out of memory. Tried to allocate 2 GiB") // a verb cut by a byte that is no space
	f.Add("\xff\xfe CUDA out of memory. Tried to allocate \xc3\x28 GiB (GPU \xff; ")
	f.Add("Out of memory allocating 9,999,999,999,999,999,999,999 bytes (allocated so far: ,,, bytes).")
	f.Add("CUDA out of memory. Tried to allocate 99999999999999999999.99 EiB. GPU 99999999999999999999 has a total capacity of")
	f.Add(strings.Repeat("x", 1<<20))
	f.Add(megabyteBody())
	f.Fuzz(func(t *testing.T, text string) {
		r, ok := Parse(text)
		if !ok {
			if !reflect.DeepEqual(r, absent) {
				t.Fatalf("not recognised but result has values: %+v", r)
			}
			return
		}
		if r.Framework == "" {
			t.Fatal("recognised without a framework")
		}
		for name, v := range map[string]int64{
			"requested": r.RequestedBytes, "total": r.TotalBytes, "free": r.FreeBytes,
			"allocated": r.AllocatedBytes, "reserved": r.ReservedBytes, "process": r.ProcessBytes,
			"limit": r.LimitBytes, "device": int64(r.DeviceIndex), "pid": int64(r.PID),
		} {
			if v < -1 {
				t.Fatalf("%s = %d, below the absent marker", name, v)
			}
		}
		for _, p := range append(append([]Process(nil), r.OtherProcesses...), r.CandidateProcesses...) {
			if p.PID < 0 || p.Bytes < 0 {
				t.Fatalf("bad process entry %+v", p)
			}
		}
		if again, _ := Parse(text); !reflect.DeepEqual(again, r) {
			t.Fatalf("Parse is not deterministic: %+v then %+v", r, again)
		}
	})
}

func TestParseMegabyteBody(t *testing.T) {
	r, ok := Parse(megabyteBody())
	if !ok || r.Framework != FrameworkPyTorch || r.RequestedBytes != 256<<20 || r.DeviceIndex != 2 {
		t.Fatalf("1 MiB body: got %+v, %v", r, ok)
	}
	if _, ok := Parse(strings.Repeat("memory ", (1<<20)/7)); ok {
		t.Fatal("1 MiB of the word memory recognised")
	}
}
