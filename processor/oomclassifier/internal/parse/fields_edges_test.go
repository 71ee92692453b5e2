package parse

import (
	"strings"
	"testing"
)

// XGBoost's and CatBoost's own templates, byte-exact, in each library's unit
// convention (boosting.go cites the sources).
func TestBoostingFields(t *testing.T) {
	for _, tt := range []struct {
		text            string
		fw              string
		requested, free int64
	}{
		// 2.x HumanMemUnit: GB = 1024^3, six significant digits.
		{"Memory allocation error on worker 0: std::bad_alloc: cudaErrorMemoryAllocation: out of memory\n- Free memory: 1.95398GB\n- Requested memory: 5.98584GB", FrameworkXGBoost, 6427246760, 2098070049},
		{"Memory allocation error on worker 3: std::bad_alloc: cudaErrorMemoryAllocation: out of memory\n- Free memory: 512B\n- Requested memory: 1.5MB\n- Reserved by the pool: 2GB", FrameworkXGBoost, 1572864, 512},
		// 1.x: raw byte counts.
		{"device_helpers.cuh:431: Memory allocation error on worker 0: std::bad_alloc: cudaErrorMemoryAllocation: out of memory\n- Free memory: 8126464\n- Requested memory: 33554432", FrameworkXGBoost, 33554432, 8126464},
		// Without its figures (an issue title): recognised, nothing read.
		{"Memory allocation error on worker 0: std::bad_alloc: cudaErrorMemoryAllocation: out of memory", FrameworkXGBoost, -1, -1},
		// CatBoost: MB = 1024^2 (a double); Free is the pool's, never read.
		{"stack_like_memory_pool.h:303: Error: Out of memory. Requested 776.3222656 MB; Free 676.4537106 MB", FrameworkCatBoost, 814032896, -1},
		{"stack_like_memory_pool.h:303: Error: Out of memory. Requested 8880 MB; Free 5902.061425 MB", FrameworkCatBoost, 9311354880, -1},
		// The template at the text's very start.
		{"Error: Out of memory. Requested 8880 MB; Free 5902.061425 MB", FrameworkCatBoost, 9311354880, -1},
		{"Memory allocation error on worker 0: out of memory\n- Free memory: 1KB\n- Requested memory: 2KB", FrameworkXGBoost, 2048, 1024},
		// CatBoost 0.7–0.9 printed no unit: no size.
		{"stack_like_memory_pool.h:294: Error: Out of memory. Requested 1070.546387; Free 1010.952393", FrameworkCatBoost, -1, -1},
	} {
		r, ok := Parse(tt.text)
		if !ok || r.Framework != tt.fw || r.RequestedBytes != tt.requested || r.FreeBytes != tt.free {
			t.Errorf("%q:\n got ok %v %s requested %d free %d\nwant %s requested %d free %d", tt.text, ok, r.Framework, r.RequestedBytes, r.FreeBytes, tt.fw, tt.requested, tt.free)
		}
		if r.DeviceIndex != -1 || r.TotalBytes != -1 || r.AllocatedBytes != -1 {
			t.Errorf("%q: a figure the text does not state: %+v", tt.text, r)
		}
	}
}

// A console's hard wrap inside a number or a word, with or without torchrun's
// rank tag repeated on the continuation lines, reads like the unbroken
// message; a break between two words stays a space, and an elided middle
// ("...") leaves the figures it hid absent.
func TestHardWrapAndElision(t *testing.T) {
	const whole = "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.12 GiB memory in use. Of the allocated memory 75.50 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated."
	want, ok := Parse(whole)
	if !ok || want.FreeBytes < 0 {
		t.Fatalf("unbroken: %+v", want)
	}
	for _, wrapped := range []string{
		"[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.0\n[rank0]: 2 GiB is free. Including non-PyTorch memory, this process has 78.12 GiB memory in use. Of the allocated memory 75.50 GiB is allocated by PyTo\n[rank0]: rch, and 1.20 GiB is reserved by PyTorch but unallocated.",
		"[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 G\niB is free. Including non-PyTorch memory, this process has 78.12 GiB memory in use. Of the allocated memory 75.50 GiB is allo\ncated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.",
		"[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of\nwhich 1.02 GiB is free. Including non-PyTorch memory, this process has 78.12 GiB memory in use. Of the allocated memory 75.50 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.",
	} {
		got, ok := Parse(wrapped)
		if !ok || !sameNumbers(got, want) {
			t.Errorf("%q:\n got  %+v\n want %+v", wrapped, got, want)
		}
	}
	// A space the copy dropped at a break between two numbers' words is not
	// turned into one number: "of which 1.02\nGiB" is 1.02 GiB either way,
	// "Process 12\n34 has" is never pid 1234 unless the text wrapped it.
	if got := unwrap("free 12\n 34 GiB"); got != "free 12 34 GiB" {
		t.Errorf("indented continuation joined: %q", got)
	}
	// A byte total at a line's end and the next line's timestamp are two
	// numbers: only a size's halves (its unit right after) are joined.
	for in, want := range map[string]string{
		"total memory reported: 12790923264\n2019-01-07 10:00:00 I next": "total memory reported: 12790923264 2019-01-07 10:00:00 I next",
		"buffer of size 54262464512\n1.06.520.086 E graph_reserve":       "buffer of size 54262464512 1.06.520.086 E graph_reserve",
		"of which 1.0\n2 GiB is free":                                    "of which 1.02 GiB is free",
		"Process 12\n34 has 1.00 GiB":                                    "Process 12 34 has 1.00 GiB",
		"of which 1.\n02 GiB is free":                                    "of which 1.02 GiB is free",
		"of which 1.02\nGiB is free":                                     "of which 1.02 GiB is free",
	} {
		if got := unwrap(in); got != want {
			t.Errorf("unwrap(%q) = %q, want %q", in, got, want)
		}
	}
	for _, elided := range []string{
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 654.00 MiB. GPU 0 has a total capacity of ... of which 22.96 GiB is free. Of the allocated memory ... is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.",
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 654.00 MiB.\nGPU 0 has a total capacity of 23.52 GiB of which 22.96 GiB is free.\n... 5.51 MiB allocated in private pools (e.g., CUDA Graphs) ...",
	} {
		r, ok := Parse(elided)
		if !ok || r.RequestedBytes != 685768704 || r.FreeBytes != 24653112279 || r.AllocatedBytes != -1 || r.ReservedBytes != -1 {
			t.Errorf("%q: %+v", elided, r)
		}
	}
}

func sameNumbers(a, b Result) bool {
	a.Stack, b.Stack = "", ""
	return a.RequestedBytes == b.RequestedBytes && a.TotalBytes == b.TotalBytes && a.FreeBytes == b.FreeBytes &&
		a.AllocatedBytes == b.AllocatedBytes && a.ReservedBytes == b.ReservedBytes && a.ProcessBytes == b.ProcessBytes &&
		a.DeviceIndex == b.DeviceIndex
}

// "with N allocated in private pools (e.g., CUDA Graphs)": the first figure
// already holds the private pools (CUDACachingAllocator.cpp), so reserved is
// first + last, and the private figure is never added again; wrapped across
// lines it reads the same.
func TestPrivatePoolsWrapped(t *testing.T) {
	const text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 304.00 MiB.\nGPU 0 has a total capacity of 94.97 GiB of which 218.81 MiB is free.\nIncluding non-PyTorch memory, this process has 93.84 GiB memory in use.\nOf the allocated memory 91.19 GiB is allocated by PyTorch, with 118.00 MiB\nallocated in private pools (e.g., CUDA Graphs), and 744.36 MiB is reserved by\nPyTorch but unallocated."
	r, ok := Parse(text)
	alloc := int64(97914516931) // 91.19 GiB
	if !ok || r.AllocatedBytes != alloc || r.ReservedBytes != alloc+780518031 || r.FreeBytes != 229438915 || r.DeviceIndex != 0 {
		t.Errorf("%+v", r)
	}
}

// HIP: the capacity sentence on the line after the request.
func TestHIPCapacityOnNextLine(t *testing.T) {
	r, ok := Parse("HIP out of memory. Tried to allocate 66.54 GiB.\nGPU 0 has a total capacity of 96.00 GiB of which 10.75 GiB is free.\nOf the allocated memory 84.36 GiB is allocated by PyTorch,\nand 360.11 MiB is reserved by PyTorch but unallocated.")
	if !ok || r.DeviceKind != DeviceROCm || r.TotalBytes != 96<<30 || r.ReservedBytes != 90580860273+377602703 {
		t.Errorf("%+v", r)
	}
}

// FuzzUnwrap: unwrap only drops, merges or turns into a space the text's
// whitespace and drops repeated rank tags: what is left of the text's other
// bytes keeps their order, and nothing is added.
func FuzzUnwrap(f *testing.F) {
	f.Add("[rank0]: a 1.0\n[rank0]: 2 GiB by PyTo\nrch")
	f.Add("x\n\ny")
	f.Add("\r")
	f.Fuzz(func(t *testing.T, text string) {
		u := unwrap(text)
		if len(u) > len(text) {
			t.Fatalf("longer: %q from %q", u, text)
		}
		strip := func(s string) string {
			return strings.Map(func(r rune) rune {
				if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
					return -1
				}
				return r
			}, s)
		}
		us, ts := strip(u), strip(text)
		k := 0
		for j := 0; j < len(us); j++ {
			for k < len(ts) && ts[k] != us[j] {
				k++
			}
			if k == len(ts) {
				t.Fatalf("bytes added or reordered: %q from %q", u, text)
			}
			k++
		}
	})
}
