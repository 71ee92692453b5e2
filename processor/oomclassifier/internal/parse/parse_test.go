package parse

import (
	"os"
	"reflect"
	"testing"

	"go.uber.org/goleak"
	"go.yaml.in/yaml/v3"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// corpusCase is one entry of testdata/cases.yaml. Want is nil for a
// look-alike that must not be recognised; a number missing from Want must be
// absent (-1). Expected byte values were computed independently of this
// package, with Python's fractions.Fraction, from the text of each message.
type corpusCase struct {
	Name string    `yaml:"name"`
	Text string    `yaml:"text"`
	Want *wantCase `yaml:"want"`
}

type wantCase struct {
	Framework  string     `yaml:"framework"`
	Stack      string     `yaml:"stack"`
	Requested  *int64     `yaml:"requested"`
	Total      *int64     `yaml:"total"`
	Free       *int64     `yaml:"free"`
	Allocated  *int64     `yaml:"allocated"`
	Reserved   *int64     `yaml:"reserved"`
	Process    *int64     `yaml:"process"`
	Limit      *int64     `yaml:"limit"`
	Device     *int       `yaml:"device"`
	PID        *int       `yaml:"pid"`
	Others     [][2]int64 `yaml:"others"`
	Candidates [][2]int64 `yaml:"candidates"`
	// DeviceKind defaults to rocm for the rocm framework and cuda otherwise.
	DeviceKind string `yaml:"device_kind"`
}

func loadCorpus(tb testing.TB) []corpusCase {
	tb.Helper()
	raw, err := os.ReadFile("testdata/cases.yaml")
	if err != nil {
		tb.Fatalf("read corpus: %v", err)
	}
	var cases []corpusCase
	if err := yaml.Unmarshal(raw, &cases); err != nil {
		tb.Fatalf("decode corpus: %v", err)
	}
	if len(cases) == 0 {
		tb.Fatal("corpus is empty")
	}
	return cases
}

func orAbsent64(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

func orAbsent(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

func processes(pairs [][2]int64) []Process {
	if len(pairs) == 0 {
		return nil
	}
	out := make([]Process, len(pairs))
	for i, p := range pairs {
		out[i] = Process{PID: int(p[0]), Bytes: p[1]}
	}
	return out
}

func (w *wantCase) result() Result {
	kind := w.DeviceKind
	switch {
	case kind != "":
	case w.Framework == FrameworkROCm:
		kind = DeviceROCm
	default:
		kind = DeviceCUDA
	}
	return Result{
		DeviceKind:         kind,
		Framework:          w.Framework,
		Stack:              w.Stack,
		RequestedBytes:     orAbsent64(w.Requested),
		TotalBytes:         orAbsent64(w.Total),
		FreeBytes:          orAbsent64(w.Free),
		AllocatedBytes:     orAbsent64(w.Allocated),
		ReservedBytes:      orAbsent64(w.Reserved),
		ProcessBytes:       orAbsent64(w.Process),
		LimitBytes:         orAbsent64(w.Limit),
		DeviceIndex:        orAbsent(w.Device),
		PID:                orAbsent(w.PID),
		OtherProcesses:     processes(w.Others),
		CandidateProcesses: processes(w.Candidates),
	}
}

func TestParseCorpus(t *testing.T) {
	positives, negatives := 0, 0
	for _, c := range loadCorpus(t) {
		t.Run(c.Name, func(t *testing.T) {
			got, ok := Parse(c.Text)
			if c.Want == nil {
				negatives++
				if ok {
					t.Fatalf("look-alike recognised as %+v", got)
				}
				if !reflect.DeepEqual(got, absent) {
					t.Fatalf("not recognised but result has values: %+v", got)
				}
				return
			}
			positives++
			if !ok {
				t.Fatal("not recognised")
			}
			got.Derived = 0 // TestDerived covers it
			if want := c.Want.result(); !reflect.DeepEqual(got, want) {
				t.Fatalf("\n got  %+v\n want %+v", got, want)
			}
		})
	}
	if positives < 40 || negatives < 25 {
		t.Fatalf("corpus too small: %d positives, %d negatives", positives, negatives)
	}
}

func TestDecimalBytes(t *testing.T) {
	tests := []struct {
		num  string
		mult uint64
		want int64
		ok   bool
	}{
		{"14.56", 1 << 30, 15633680957, true}, // 15633680957.44 rounds down
		{"0.5", 1, 1, true},                   // half rounds up
		{"0.49", 1, 0, true},
		{"1.17", 1 << 30, 1256277934, true}, // 1256277934.08
		{"1,073,741,824", 1, 1073741824, true},
		{"0", 1 << 30, 0, true},
		{"8589934591.99", 1 << 30, 9223372036844038390, true}, // 2^63 − 2^30 + 1063004405.76
		{"17179869184.00", 1 << 30, 0, false},                 // UINT64_MAX: PyTorch's "no limit"
		{"1..2", 1, 0, false},
		{"", 1, 0, false},
		{"1.2.3", 1, 0, false},
		{"99999999999999999999", 1, 0, false},
	}
	for _, tt := range tests {
		got, ok := decimalBytes(tt.num, tt.mult)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("decimalBytes(%q, %d) = %d, %v; want %d, %v", tt.num, tt.mult, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSizeAtAndBefore(t *testing.T) {
	tests := []struct {
		s    string
		want int64
	}{
		{"20.00 MiB", 20 << 20},
		{"1.17GiB", 1256277934},
		{"10.00G", 10 << 30},
		{"0 bytes", 0},
		{"512B", 512},
		{"512.0KiB", 512 << 10},
		{"1.00 TiB", 1 << 40},
	}
	for _, tt := range tests {
		got, end, ok := sizeAt(tt.s, 0)
		if !ok || got != tt.want || end != len(tt.s) {
			t.Errorf("sizeAt(%q) = %d, %d, %v; want %d", tt.s, got, end, ok, tt.want)
		}
		if got, ok := sizeBefore("x "+tt.s, len(tt.s)+2); !ok || got != tt.want {
			t.Errorf("sizeBefore(%q) = %d, %v; want %d", tt.s, got, ok, tt.want)
		}
	}
	for _, bad := range []string{"MiB", "12 parsecs", "12", ". GiB"} {
		if _, _, ok := sizeAt(bad, 0); ok {
			t.Errorf("sizeAt(%q) accepted", bad)
		}
	}
}

func TestNonOOMDoesNotAllocate(t *testing.T) {
	lines := []string{
		"2024-05-01T10:00:00Z INFO request completed path=/v1/completions status=200 latency_ms=37",
		"Memory usage: 12.3 GiB / 80.0 GiB (15%) allocated tensors=1200",
		"RuntimeError: CUDA error: an illegal memory access was encountered",
	}
	for _, l := range lines {
		if n := testing.AllocsPerRun(100, func() { Parse(l) }); n != 0 {
			t.Errorf("Parse(%q) allocated %v times", l, n)
		}
	}
}

func TestStackDetection(t *testing.T) {
	base := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free."
	for prefix, want := range map[string]string{
		"": "",
		"File \"/usr/lib/python3/site-packages/vllm/worker/model_runner.py\"\n": FrameworkVLLM,
		"File \"/usr/src/server/text_generation_server/server.py\"\n":           FrameworkTGI,
	} {
		got, ok := Parse(prefix + base)
		if !ok || got.Stack != want || got.Framework != FrameworkPyTorch {
			t.Errorf("prefix %q: got %q/%q, %v; want pytorch/%q", prefix, got.Framework, got.Stack, ok, want)
		}
	}
}

// containsFold must fold letters only: '_' folded like a letter (0x7f) never
// matched itself, so "_status_alloc_failed" was never found.
func TestContainsFoldNonLetters(t *testing.T) {
	for _, c := range []struct {
		s, sub string
		want   bool
	}{
		{"cudnn error CUDNN_STATUS_ALLOC_FAILED", "_status_alloc_failed", true},
		{"a_b", "a_b", true},
		{"a\x7fb", "a_b", false},
		{"GPU_0_BFC", "gpu_0", true},
	} {
		if got := containsFold(c.s, c.sub); got != c.want {
			t.Errorf("containsFold(%q, %q) = %v, want %v", c.s, c.sub, got, c.want)
		}
	}
}
