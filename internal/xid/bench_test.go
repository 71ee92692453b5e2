package xid

import "testing"

var benchSink bool

// BenchmarkParseLineNonXid measures the prefilter on ordinary kernel lines,
// which are nearly all the lines a log pipeline sees.
func BenchmarkParseLineNonXid(b *testing.B) {
	lines := []string{
		"Nov 29 23:09:35 gpu-node-7 kernel: [ 1234.5678] nvme nvme0: I/O 123 QID 4 timeout, completion polled",
		"[  123.456789] pcieport 0000:00:03.1: AER: Corrected error received: 0000:3b:00.0",
		"2026-11-29T23:09:35.123456+00:00 gpu-node-7 containerd[1123]: time=\"2026-11-29T23:09:35Z\" level=info msg=\"StartContainer\"",
		"audit: type=1400 audit(1700000000.123:42): apparmor=\"DENIED\" operation=\"open\" profile=\"snap\" name=\"/proc/1/environ\"",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, benchSink = ParseLine(lines[i&3])
	}
}

// BenchmarkParseLineXid measures a full parse of a syslog-stamped Xid line.
func BenchmarkParseLineXid(b *testing.B) {
	line := "Nov 29 23:09:35 gpu-node-7 kernel: [ 1234.5678] NVRM: Xid (PCI:0000:3b:00): 13, pid=2213, name=python train.py, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address"
	b.ReportAllocs()
	for b.Loop() {
		_, benchSink = ParseLineAt(line, refNow)
	}
}

// BenchmarkParseLineXidBare measures a bare /dev/kmsg Xid text.
func BenchmarkParseLineXidBare(b *testing.B) {
	line := "NVRM: Xid (PCI:0000:3b:00): 31, pid=1234, name=python3, Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f2a_40000000"
	b.ReportAllocs()
	for b.Loop() {
		_, benchSink = ParseLine(line)
	}
}
