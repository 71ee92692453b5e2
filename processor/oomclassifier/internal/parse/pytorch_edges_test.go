package parse

import (
	"reflect"
	"testing"
)

// Edges of the PyTorch field readers: figures of 0 bytes and at the 2^62
// guard, process ids at the int32 limit, a process exactly the size of the
// reserved memory.

func TestParsePyTorchLegacyCachedEdges(t *testing.T) {
	// The < 1.4 shape of pytorch_1x_cached in testdata/cases.yaml with its
	// figures set to the edges: reserved is allocated + cached.
	tests := []struct {
		name, s  string
		reserved int64
	}{
		{"zero_cached", "0; 11.17 GiB total capacity; 10.90 GiB already allocated; 576.00 KiB free; 0 bytes cached)", 11703785882},
		{"zero_allocated", "0; 11.17 GiB total capacity; 0 bytes already allocated; 576.00 KiB free; 30.96 MiB cached)", 32463913}, // 32463912.96,
		{"cached_at_guard", "0; 11.17 GiB total capacity; 0 bytes already allocated; 576.00 KiB free; 4.00 EiB cached)", 1 << 62},
		{"allocated_at_guard", "0; 11.17 GiB total capacity; 4.00 EiB already allocated; 576.00 KiB free; 0 bytes cached)", 1 << 62},
		{"cached_over_guard", "0; 11.17 GiB total capacity; 0 bytes already allocated; 576.00 KiB free; 4.50 EiB cached)", -1},
		{"cached_after_parenthesis", "0; 11.17 GiB total capacity; 10.90 GiB already allocated; 576.00 KiB free) 30.96 MiB cached", -1},
	}
	for _, tt := range tests {
		r := newResult(FrameworkPyTorch)
		parsePyTorchLegacy(tt.s, &r)
		if r.ReservedBytes != tt.reserved {
			t.Errorf("%s: reserved %d; want %d", tt.name, r.ReservedBytes, tt.reserved)
		}
	}
}

func TestParsePyTorch2UnallocatedGuard(t *testing.T) {
	for _, tt := range []struct {
		s        string
		reserved int64
	}{
		{". GPU 0 has a total capacity of 15.24 GiB of which 15.09 GiB is free. Of the allocated memory 4.00 EiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.", 1 << 62},
		{". GPU 0 has a total capacity of 15.24 GiB of which 15.09 GiB is free. Of the allocated memory 0 bytes is allocated by PyTorch, and 4.00 EiB is reserved by PyTorch but unallocated.", 1 << 62},
		{". GPU 0 has a total capacity of 15.24 GiB of which 15.09 GiB is free. Of the allocated memory 4.50 EiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.", -1},
	} {
		r := newResult(FrameworkPyTorch)
		parsePyTorch2(tt.s, &r)
		if r.ReservedBytes != tt.reserved {
			t.Errorf("parsePyTorch2(%q): reserved %d; want %d", tt.s, r.ReservedBytes, tt.reserved)
		}
	}
}

func TestListedProcessesEdges(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want []Process
	}{
		{"Process 12 has 1.00 GiB memory in use", []Process{{PID: 12, Bytes: 1 << 30}}},
		{"Process 2147483647 has 1.00 GiB memory in use", []Process{{PID: 1<<31 - 1, Bytes: 1 << 30}}},
		{"Process 2147483648 has 1.00 GiB memory in use", nil},
		{"Process 12 has 1.00 GiB in use", nil},
		{"Process 1 has 2.00 MiB memory in use. Process 2 has 0 bytes memory in use", []Process{{PID: 1, Bytes: 2 << 20}, {PID: 2, Bytes: 0}}},
	} {
		if got := listedProcesses(tt.s); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("listedProcesses(%q) = %v; want %v", tt.s, got, tt.want)
		}
	}
}

func TestAssignProcessesEdges(t *testing.T) {
	a, b := Process{PID: 1, Bytes: 10 << 30}, Process{PID: 2, Bytes: 1 << 30}

	// "this process has 0 bytes": the failing process is named, so every
	// listed entry is another one.
	r := absent
	r.ProcessBytes = 0
	assignProcesses([]Process{a}, &r)
	if r.PID != -1 || r.ProcessBytes != 0 || !reflect.DeepEqual(r.OtherProcesses, []Process{a}) {
		t.Errorf("named process: %+v", r)
	}

	// One entry exactly the size of the reserved memory is the failing one.
	r = absent
	r.ReservedBytes = a.Bytes
	assignProcesses([]Process{a, b}, &r)
	if r.PID != 1 || r.ProcessBytes != a.Bytes || r.Derived&DerivedProcess == 0 ||
		!reflect.DeepEqual(r.OtherProcesses, []Process{b}) || r.CandidateProcesses != nil {
		t.Errorf("reserved-sized process: %+v", r)
	}

	// Two at least that size: ambiguous, both are candidates.
	r = absent
	r.ReservedBytes = b.Bytes
	assignProcesses([]Process{a, b}, &r)
	if r.PID != -1 || !reflect.DeepEqual(r.CandidateProcesses, []Process{a, b}) {
		t.Errorf("ambiguous: %+v", r)
	}
}

func TestTorchOOMErrorAfterBareName(t *testing.T) {
	if !torchOOMError("OutOfMemoryError raised as torch.OutOfMemoryError") {
		t.Error("torchOOMError stopped at the unqualified name at offset 0")
	}
	if torchOOMError("OutOfMemoryError") {
		t.Error("torchOOMError accepted the unqualified name")
	}
}
