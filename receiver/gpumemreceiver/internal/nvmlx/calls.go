package nvmlx

// The NVML calls the scrape concerns make whose symbols a supported driver may lack, for
// Device.Initial: a concern's probe of the call starts from what the loaded library exports.
const (
	CallMemoryInfoV2       = symMemoryInfoV2
	CallUtilizationRates   = symUtilizationRates
	CallRetiredPages       = symRetiredPages
	CallRetiredPagesStatus = symRetiredPagesPending
	CallRemappedRows       = symRemappedRows
	CallEccMode            = symEccMode
	CallTotalEccErrors     = symTotalEccErrors
	CallProcessUtilization = symProcessUtilization
	CallPersistenceMode    = symPersistenceMode
	CallComputeMode        = symComputeMode
)
