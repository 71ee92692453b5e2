package parse

import (
	"strings"
	"testing"
)

// A message recognised only with its line break undone ("KVCache\nallocation")
// is unwrapped, or unescaped, up to maxUnwrap bytes of text and not beyond.
func TestParseUnwrapLimit(t *testing.T) {
	for _, tt := range []struct {
		name, msg string
	}{
		{"break", "Insufficient GPU memory for KVCache\nallocation."},
		{"escaped_break", `Insufficient GPU memory for KVCache\nallocation.`},
	} {
		if _, ok := recognise(tt.msg); ok {
			t.Fatalf("%s: recognised as written; the case tests nothing", tt.name)
		}
		at := tt.msg + strings.Repeat("x", maxUnwrap-len(tt.msg))
		if _, ok := Parse(at); !ok {
			t.Errorf("%s: %d bytes: not recognised", tt.name, len(at))
		}
		if _, ok := Parse(at + "x"); ok {
			t.Errorf("%s: %d bytes: recognised past the limit", tt.name, len(at)+1)
		}
	}
}

// A backslash or a line break at offset 0 counts like one anywhere else.
func TestParseEscapeOrBreakAtOffsetZero(t *testing.T) {
	for _, text := range []string{
		`\"x\" Insufficient GPU memory for KVCache\nallocation.`,
		"\nInsufficient GPU memory for KVCache\nallocation.",
	} {
		if _, ok := Parse(text); !ok {
			t.Errorf("%q: not recognised", text)
		}
	}
}

func TestDetectStackEdges(t *testing.T) {
	for text, want := range map[string]string{
		"vllm x":                   FrameworkVLLM,
		"VLLM x":                   FrameworkVLLM,
		"text-generation-launcher": FrameworkTGI,
		"text_generation_server":   FrameworkTGI,
		"generation":               "",
		"llama runner started":     FrameworkOllama, // "" matches any prefix
		"ollama x":                 FrameworkOllama,
		"llama x":                  "",
		"OLLAMA_HOST":              FrameworkOllama,
		"x":                        "",
	} {
		if got := detectStack(text); got != want {
			t.Errorf("detectStack(%q) = %q; want %q", text, got, want)
		}
	}
}

func TestAllocatesGPUBufferEdges(t *testing.T) {
	for text, want := range map[string]bool{
		"allocate CUDA0 buffer":                 true,
		"allocate ROCm0 buffer":                 true,
		"CUDA0 x ROCm0 allocate ROCm0":          true,
		"CUDA0 CUDA1 allocate CUDA2":            true,
		"allocate cuda0":                        false,
		"allocateCUDA0":                         false,
		"failed to allocate buffer on CUDA0":    false,
		"failed to allocate CUDA0 buffer; CUDA": true,
	} {
		if got := allocatesGPUBuffer(text); got != want {
			t.Errorf("allocatesGPUBuffer(%q) = %v; want %v", text, got, want)
		}
	}
}

func TestPrecededByEdges(t *testing.T) {
	if !precededBy("ab", "ab", "") {
		t.Error(`"" did not match at offset 0`)
	}
	if precededBy("ab", "ab", "x") {
		t.Error("a prefix matched before offset 0")
	}
	if !precededBy("ab xab", "ab", "x") {
		t.Error("the second occurrence was not read")
	}
	if precededBy("", "ab", "") {
		t.Error("matched in an empty text")
	}
}
