package parse

import "testing"

func TestFirstIndex(t *testing.T) {
	for _, tt := range []struct {
		text  string
		words []string
		want  int
	}{
		{"a", []string{"a"}, 0},
		{"xa", []string{"a"}, 1},
		{"b a", []string{"a", "b"}, 0}, // the smallest index, not the first word's
		{"a b", []string{"b", "a"}, 0},
		{"a b", []string{"a", "b"}, 0},
		{"x", []string{"a", "b"}, -1},
		{"", nil, -1},
	} {
		if got := firstIndex(tt.text, tt.words); got != tt.want {
			t.Errorf("firstIndex(%q, %q) = %d; want %d", tt.text, tt.words, got, tt.want)
		}
	}
}

func TestContainsAnyFold(t *testing.T) {
	if !containsAnyFold("X OUT OF MEMORY", []string{"zzz", "out of memory"}) {
		t.Error("missed the second word")
	}
	if containsAnyFold("x", []string{"y"}) || containsAnyFold("x", nil) {
		t.Error("matched nothing")
	}
}
