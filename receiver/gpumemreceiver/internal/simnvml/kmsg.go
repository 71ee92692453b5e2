package simnvml

import (
	"fmt"
	"time"
)

// kmsgPrio is the /dev/kmsg priority field of NVRM Xid lines: facility kern
// (0) and level warning (4), as dmesg -x shows them ("kern  :warn").
const kmsgPrio = 4

// xidTexts are driver messages for common Xids, used when an event gives
// none, copied in shape from real kernel logs.
var xidTexts = map[uint64]string{
	13: "Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address",
	31: "Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f3a_4c000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
	43: "Ch 00000010",
	48: "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.",
	63: "Row Remapper: New row marked for remapping, reset gpu to activate.",
	64: "Row Remapper: Row remapping failed.",
	79: "GPU has fallen off the bus.",
	94: "Contained: SM (0x1). RST: No, D-RST: No",
	95: "Uncontained: FBHUB. RST: Yes, D-RST: No",
}

// xidText is the kernel message of an Xid event, as the NVIDIA driver prints
// it: "NVRM: Xid (PCI:0000:3b:00): 31, pid=1234, name=python3, <text>".
func xidText(e Event, pci pciAddr) string {
	who := "pid='<unknown>', name=<unknown>"
	if e.PID != 0 {
		name := e.Name
		if name == "" {
			name = "<unknown>"
		}
		who = fmt.Sprintf("pid=%d, name=%s", e.PID, name)
	}
	msg := e.Message
	if msg == "" {
		msg = xidTexts[e.Xid]
	}
	if msg == "" {
		return fmt.Sprintf("NVRM: Xid (PCI:%s): %d, %s", pci.kmsg(), e.Xid, who)
	}
	return fmt.Sprintf("NVRM: Xid (PCI:%s): %d, %s, %s", pci.kmsg(), e.Xid, who, msg)
}

// kmsgRecord formats one /dev/kmsg record: "prio,seq,usec,flags;text\n",
// usec counting from boot.
func kmsgRecord(seq uint64, sinceBoot time.Duration, text string) string {
	return fmt.Sprintf("%d,%d,%d,-;%s\n", kmsgPrio, seq, max(sinceBoot.Microseconds(), 0), text)
}
