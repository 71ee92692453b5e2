package kmsg

import "testing"

var benchRecord Record

func BenchmarkParseRecord(b *testing.B) {
	in := []byte("4,816,1234568100,-;NVRM: Xid (PCI:0000:3b:00): 13, pid=2213, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address\n")
	b.ReportAllocs()
	for b.Loop() {
		benchRecord, _ = ParseRecord(in)
	}
}

func BenchmarkParseRecordDict(b *testing.B) {
	in := []byte("3,813,1234567890,-;pcieport 0000:00:03.1: AER: Uncorrected (Non-Fatal) error received: 0000:3b:00.0\n SUBSYSTEM=pci\n DEVICE=+pci:0000:00:03.1\n")
	b.ReportAllocs()
	for b.Loop() {
		benchRecord, _ = ParseRecord(in)
	}
}
