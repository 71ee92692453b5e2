package classify

// defaultSpecTotals maps NVML product names (hw.model) to the total framebuffer NVML
// usually reports for a healthy card with default ECC settings, in bytes. These are the
// values nvidia-smi prints (MiB) on current drivers, not the marketing capacity: an
// "80GB" H100 reports 81559 MiB. Only exact names match, so MIG instances ("… MIG 1g.10gb")
// are never compared against a full card. The capacity_loss rule allows
// SpecShortfallFraction below these before flagging, which absorbs driver-to-driver drift.
func defaultSpecTotals() map[string]int64 {
	return map[string]int64{
		"NVIDIA H200":             143771 * mib,
		"NVIDIA H100 80GB HBM3":   81559 * mib,
		"NVIDIA H100 PCIe":        81559 * mib,
		"NVIDIA A100-SXM4-80GB":   81920 * mib,
		"NVIDIA A100 80GB PCIe":   81920 * mib,
		"NVIDIA A100-SXM4-40GB":   40960 * mib,
		"NVIDIA A100-PCIE-40GB":   40960 * mib,
		"NVIDIA L40S":             46068 * mib,
		"NVIDIA A40":              46068 * mib,
		"NVIDIA L4":               23034 * mib,
		"NVIDIA A10G":             23028 * mib,
		"NVIDIA A10":              23028 * mib,
		"Tesla V100-SXM2-32GB":    32768 * mib,
		"Tesla V100-SXM2-16GB":    16160 * mib,
		"Tesla T4":                15360 * mib,
		"NVIDIA GeForce RTX 4090": 24564 * mib,
		"NVIDIA GeForce RTX 3090": 24576 * mib,
	}
}
