package xid

// catalog lists the Xids this package knows.
//
// Source: NVIDIA, "Xid Errors" and its Xid catalog ("Analyzing Xid Errors
// with the Xid Catalog"), NVIDIA GPU deployment and management
// documentation, https://docs.nvidia.com/deploy/xid-errors/ . Descriptions
// follow the catalog's wording; Origin is the first of the catalog's
// possible causes that the text names as the usual one.
//
// Fault is our judgement, not NVIDIA's: it is true when the Xid shows the
// application's context or the GPU was faulted, so that an allocation failure
// close to it should be blamed on the fault (cause gpu_fault), and false for
// informational or bookkeeping Xids (45 cleanup after an abort, 61 firmware
// breakpoint, 92 single-bit ECC rate, 121 corrected link error, 154 recovery
// action, which restates the action for another Xid that is itself reported)
// and for engines that do not hold the failing allocation (68 video decoder).
// 63 (row remap or page retirement recorded) counts as a fault because it
// follows an uncorrectable memory error that also cost capacity until reset.
var catalog = [...]Entry{
	{8, "GPU stopped processing", OriginApplication, SeverityError, true},
	{13, "Graphics Engine Exception", OriginApplication, SeverityError, true},
	{31, "GPU memory page fault", OriginApplication, SeverityError, true},
	{32, "Invalid or corrupted push buffer stream", OriginHardware, SeverityError, true},
	{38, "Driver firmware error", OriginDriver, SeverityError, true},
	{43, "GPU stopped processing", OriginApplication, SeverityError, true},
	{45, "Preemptive cleanup, due to previous errors", OriginDriver, SeverityWarn, false},
	{46, "GPU stopped processing", OriginDriver, SeverityError, true},
	{48, "Double Bit ECC Error", OriginHardware, SeverityError, true},
	{57, "Error programming video memory interface", OriginHardware, SeverityError, true},
	{58, "Unstable video memory interface detected", OriginHardware, SeverityError, true},
	{61, "Internal micro-controller breakpoint/warning", OriginDriver, SeverityWarn, false},
	{62, "Internal micro-controller halt", OriginHardware, SeverityError, true},
	{63, "ECC page retirement or row remapping recording event", OriginHardware, SeverityError, true},
	{64, "ECC page retirement or row remapper recording failure", OriginHardware, SeverityError, true},
	{68, "NVDEC0 Exception (video processor exception)", OriginHardware, SeverityError, false},
	{69, "Graphics Engine class error", OriginApplication, SeverityError, true},
	{74, "NVLink Error", OriginHardware, SeverityError, true},
	{79, "GPU has fallen off the bus", OriginHardware, SeverityError, true},
	{92, "High single-bit ECC error rate", OriginHardware, SeverityWarn, false},
	{94, "Contained ECC error", OriginHardware, SeverityError, true},
	{95, "Uncontained ECC error", OriginHardware, SeverityError, true},
	{109, "Context Switch Timeout Error", OriginApplication, SeverityError, true},
	{119, "GSP RPC Timeout", OriginDriver, SeverityError, true},
	{120, "GSP Error", OriginDriver, SeverityError, true},
	{121, "C2C Link corrected error", OriginHardware, SeverityWarn, false},
	{140, "Unrecovered ECC Error", OriginHardware, SeverityError, true},
	{143, "GPU Initialization Failure", OriginHardware, SeverityError, true},
	{144, "NVLink: SAW Error", OriginHardware, SeverityError, true},
	{145, "NVLink: RLW Error", OriginHardware, SeverityError, true},
	{146, "NVLink: TLW Error", OriginHardware, SeverityError, true},
	{147, "NVLink: TREX Error", OriginHardware, SeverityError, true},
	{148, "NVLink: NVLPW_CTRL Error", OriginHardware, SeverityError, true},
	{149, "NVLink: NETIR Error", OriginHardware, SeverityError, true},
	{150, "NVLink: MSE Error", OriginHardware, SeverityError, true},
	{154, "GPU Recovery Action Changed", OriginDriver, SeverityWarn, false},
}
