package xid

// The catalog (catalog_table.go) lists every code of NVIDIA's Xid catalog:
//
//	NVIDIA, "Analyzing Xid Errors with the Xid Catalog", NVIDIA GPU deployment and
//	management documentation,
//	https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
//	(the catalog for Ampere and newer GPUs, codes 1-172; read 2026-12-01).
//
// Mnemonic, Description and Action are that table's Mnemonic, Description and
// "Resolution Bucket (Immediate Action)" columns, verbatim, including its
// "Unused" rows (codes the catalog says no current data-center GPU reports,
// all with action CONTACT_SUPPORT). Codes 162-172 have no immediate action in
// the catalog: their Action is ActionNone. Mnemonics and actions were checked
// against NVIDIA's own NVSentinel mapping, file
// distros/kubernetes/nvsentinel/charts/gpu-health-monitor/xiderrorsmapping.csv
// of github.com/NVIDIA/NVSentinel at commit
// 6f8b0fcfa8e502bdda78fabf96facef729a9285b; where the two differ the
// documentation wins, and the differences are listed at the rows concerned.
//
// Origin, Severity and Fault are our judgement, not NVIDIA's.
//
// Origin is where the cause usually lies by the catalog's description and
// trigger text: application for faults the catalog attributes to the user's
// program, driver for driver, firmware and software-defined events, hardware
// for memory, links, engines and boards; unknown for Unused rows and events no
// component owns (test messages, DLA on parts that have none). The codes that
// predate this catalog keep the origin they had under NVIDIA's older table of
// possible causes (https://docs.nvidia.com/deploy/xid-errors/archive/index.html).
//
// Fault is true when the Xid shows the application's context or the GPU was
// faulted, so that an allocation failure close to it should be blamed on the
// fault (cause gpu_fault). For the codes new in this catalog it follows the
// immediate action: true for RESTART_APP, RESET_GPU, RESTART_BM, RESTART_VM and
// the ECC and NVLink workflows, false otherwise, and false for the video,
// JPEG and optical-flow engines (NVDEC, NVJPG, OFA, SEC2), which do not hold
// the failing allocation. Severity is ERROR for faults and for every action
// other than IGNORE and XID_154. Seven older codes keep earlier judgements
// that differ from that rule (catalog_test.go lists them): 38 and 43 count as
// faults although NVIDIA says IGNORE, because the channel is torn down; 63
// (row remap or page retirement recorded) counts as a fault because it follows
// an uncorrectable memory error that also cost capacity until reset; 57 and
// 58 (frame-buffer link and memory errors on older GPUs) count as faults; 45
// (cleanup after an abort, restating another Xid) and 61 (firmware
// breakpoint) are logged at WARN. Codes without an action (162-172) are never
// faults; uncorrectable or fatal ones among them are logged at ERROR.

// The short names keep the table in catalog_table.go one row per line.
const (
	oApp = OriginApplication
	oDrv = OriginDriver
	oHW  = OriginHardware
	oUnk = OriginUnknown

	sErr  = SeverityError
	sWarn = SeverityWarn
)

// unusedDescription is the catalog's description of codes no current GPU reports.
const unusedDescription = "Unused"

// unused is a row the catalog marks Unused: description "Unused", action
// CONTACT_SUPPORT, as the catalog publishes them; never a fault.
func unused(code int, mnemonic string) Entry {
	return Entry{code, mnemonic, unusedDescription, ActionContactSupport, oUnk, sErr, false}
}
