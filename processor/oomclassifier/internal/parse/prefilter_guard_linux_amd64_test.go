//go:build !purego

package parse

import (
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// nextKey must read nothing outside the text: each text is placed right after
// an inaccessible page and right before another, so a load one byte beyond
// either end faults. Every length up to 80 and every from, at both ends.
func TestNextKeyReadsOnlyTheText(t *testing.T) {
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 3*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("map three pages: %v", err)
	}
	defer syscall.Munmap(mem)
	for _, guard := range [][]byte{mem[:page], mem[2*page:]} {
		if err := syscall.Mprotect(guard, syscall.PROT_NONE); err != nil {
			t.Fatalf("protect a guard page: %v", err)
		}
	}
	data := mem[page : 2*page]
	src := strings.Repeat("alloc memory cuda D V yY llff ud si \xed\xff ", 4)
	for n := 0; n <= 80; n++ {
		for _, at := range []int{0, page - n} { // the text's first byte after the first guard, its last before the second
			copy(data[at:at+n], src[:n])
			text := unsafe.String(unsafe.SliceData(data[at:]), n)
			checkNextKey(t, text)
		}
	}
}
