package xid

// catalog lists every code of NVIDIA's Xid catalog, in order. Source of every
// row: https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
// (columns Code, Mnemonic, Description, Resolution Bucket (Immediate Action));
// cross-checked against NVIDIA/NVSentinel
// distros/kubernetes/nvsentinel/charts/gpu-health-monitor/xiderrorsmapping.csv
// @ 6f8b0fcfa8e502bdda78fabf96facef729a9285b. NVSentinel maps every Unused row
// to UNEXPECTED_ERR_REPORT_ISSUE where the catalog says CONTACT_SUPPORT; the
// catalog's value is kept. Origin, Severity and Fault: see catalog.go.
var catalog = [...]Entry{
	// 1-30: FIFO, graphics and legacy engine channels.
	unused(1, "ROBUST_CHANNEL_FIFO_ERROR_FIFO_METHOD"),
	unused(2, "ROBUST_CHANNEL_FIFO_ERROR_SW_METHOD"),
	unused(3, "ROBUST_CHANNEL_FIFO_ERROR_UNK_METHOD"),
	unused(4, "ROBUST_CHANNEL_FIFO_ERROR_CHANNEL_BUSY"),
	unused(5, "ROBUST_CHANNEL_FIFO_ERROR_RUNOUT_OVERFLOW"),
	unused(6, "ROBUST_CHANNEL_FIFO_ERROR_PARSE_ERR"),
	unused(7, "ROBUST_CHANNEL_FIFO_ERROR_PTE_ERR"),
	{8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", "GPU stopped processing", ActionRestartApp, oApp, sErr, true},
	unused(9, "ROBUST_CHANNEL_GR_ERROR_INSTANCE"),
	unused(10, "ROBUST_CHANNEL_GR_ERROR_SINGLE_STEP"),
	{11, "ROBUST_CHANNEL_GR_ERROR_MISSING_HW", "Invalid or corrupted push buffer stream", ActionRestartApp, oApp, sErr, true},
	unused(12, "ROBUST_CHANNEL_GR_ERROR_SW_METHOD"),
	// The catalog gives 13 two mnemonics in one cell; kept as written.
	{13, "ROBUST_CHANNEL_GR_EXCEPTION / ROBUST_CHANNEL_GR_ERROR_SW_NOTIFY", "Graphics Engine Exception", ActionRestartApp, oApp, sErr, true},
	// 14 is listed as applying to every GPU, described "Unused"; its trigger:
	// "Fake or injected error from userspace".
	{14, "ROBUST_CHANNEL_FAKE_ERROR", "Unused", ActionIgnore, oApp, sWarn, false},
	unused(15, "ROBUST_CHANNEL_SCANLINE_TIMEOUT"),
	unused(16, "ROBUST_CHANNEL_VBLANK_CALLBACK_TIMEOUT"),
	unused(17, "ROBUST_CHANNEL_PARAMETER_ERROR"),
	unused(18, "ROBUST_CHANNEL_BUS_MASTER_TIMEOUT_ERROR"),
	unused(19, "ROBUST_CHANNEL_DISP_MISSED_NOTIFIER"),
	unused(20, "ROBUST_CHANNEL_MPEG_ERROR_SW_METHOD"),
	unused(21, "ROBUST_CHANNEL_ME_ERROR_SW_METHOD"),
	unused(22, "ROBUST_CHANNEL_VP_ERROR_SW_METHOD"),
	unused(23, "ROBUST_CHANNEL_RC_LOGGING_ENABLED"),
	unused(24, "ROBUST_CHANNEL_GR_SEMAPHORE_TIMEOUT"),
	{25, "ROBUST_CHANNEL_GR_ILLEGAL_NOTIFY", "Invalid or illegal push buffer stream", ActionRestartApp, oApp, sErr, true},
	unused(26, "ROBUST_CHANNEL_FIFO_ERROR_FBISTATE_TIMEOUT"),
	unused(27, "ROBUST_CHANNEL_VP_ERROR"),
	unused(28, "ROBUST_CHANNEL_VP2_ERROR"),
	unused(29, "ROBUST_CHANNEL_BSP_ERROR"),
	unused(30, "ROBUST_CHANNEL_BAD_ADDR_ACCESS"),

	// 31-48: page faults, push buffers, firmware, copy engines, teardown, ECC.
	{31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault", ActionRestartApp, oApp, sErr, true},
	// 32: the trigger text blames PCIe quality, not the application.
	{32, "ROBUST_CHANNEL_PBDMA_ERROR", "Invalid or corrupted push buffer stream", ActionRestartApp, oHW, sErr, true},
	unused(33, "ROBUST_CHANNEL_SEC_ERROR"),
	unused(34, "ROBUST_CHANNEL_MSVLD_ERROR"),
	unused(35, "ROBUST_CHANNEL_MSPDEC_ERROR"),
	unused(36, "ROBUST_CHANNEL_MSPPP_ERROR"),
	{37, "ROBUST_CHANNEL_FECS_ERR_UNIMP_FIRMWARE_METHOD", "Driver firmware error", ActionIgnore, oDrv, sWarn, false},
	{38, "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT", "Driver firmware error", ActionIgnore, oDrv, sErr, true},
	{39, "ROBUST_CHANNEL_CE0_ERROR", "Copy Engine Exception", ActionRestartApp, oHW, sErr, true},
	{40, "ROBUST_CHANNEL_CE1_ERROR", "Copy Engine Exception", ActionRestartApp, oHW, sErr, true},
	{41, "ROBUST_CHANNEL_CE2_ERROR", "Copy Engine Exception", ActionRestartApp, oHW, sErr, true},
	unused(42, "ROBUST_CHANNEL_VIC_ERROR"),
	{43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "GPU stopped processing", ActionIgnore, oApp, sErr, true},
	{44, "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW", "Graphics Engine fault during context switch", ActionIgnore, oDrv, sWarn, false},
	{45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "Preemptive cleanup, due to previous errors – Most likely to see when running multiple cuda applications and hitting a DBE", ActionWorkflowXid45, oDrv, sWarn, false},
	{46, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", "GPU stopped processing", ActionResetGPU, oDrv, sErr, true},
	unused(47, "ROBUST_CHANNEL_NVENC0_ERROR"),
	{48, "ROBUST_CHANNEL_GPU_ECC_DBE", "Double Bit ECC Error", ActionWorkflowXid48, oHW, sErr, true},

	// 49-69: silent running, board, frame buffer, micro-controllers, remapping, video.
	unused(49, "SILENT_RUNNING_CONSTANT_LEVEL_SET_BY_REGISTRY"),
	unused(50, "SILENT_RUNNING_LEVEL_TRANSITION_DUE_TO_RC_ERROR"),
	unused(51, "SILENT_RUNNING_STRESS_TEST_FAILURE"),
	unused(52, "SILENT_RUNNING_LEVEL_TRANS_DUE_TO_TEMP_RISE"),
	unused(53, "SILENT_RUNNING_TEMP_REDUCED_CLOCKING"),
	{54, "SILENT_RUNNING_PWR_REDUCED_CLOCKING", "Auxiliary power is not connected to the GPU board", ActionCheckMechanicals, oHW, sErr, false},
	unused(55, "SILENT_RUNNING_TEMPERATURE_READ_ERROR"),
	unused(56, "DISPLAY_CHANNEL_EXCEPTION"),
	// 57, 58 and 61 are Unused on current GPUs; older GPUs report them (older
	// table: video memory interface errors, micro-controller breakpoint), and
	// they keep the judgement they had then.
	{57, "FB_LINK_TRAINING_FAILURE_ERROR", "Unused", ActionContactSupport, oHW, sErr, true},
	{58, "FB_MEMORY_ERROR", "Unused", ActionContactSupport, oHW, sErr, true},
	unused(59, "PMU_ERROR"),
	{60, "ROBUST_CHANNEL_SEC2_ERROR", "Video processor exception", ActionRestartApp, oDrv, sErr, false},
	{61, "PMU_BREAKPOINT", "Unused", ActionContactSupport, oDrv, sWarn, false},
	{62, "PMU_HALT_ERROR", "Internal micro-controller halt (newer drivers)", ActionResetGPU, oHW, sErr, true},
	{63, "INFOROM_DRAM_RETIREMENT_EVENT", "GPU memory remapping event", ActionIgnore, oHW, sErr, true},
	{64, "INFOROM_DRAM_RETIREMENT_FAILURE", "GPU memory remapping failure", ActionResetGPU, oHW, sErr, true},
	unused(65, "ROBUST_CHANNEL_NVENC1_ERROR"),
	{66, "ROBUST_CHANNEL_FECS_ERR_REG_ACCESS_VIOLATION", "Illegal access by driver", ActionIgnore, oDrv, sWarn, false},
	{67, "ROBUST_CHANNEL_FECS_ERR_VERIF_VIOLATION", "Illegal access by driver", ActionIgnore, oDrv, sWarn, false},
	{68, "ROBUST_CHANNEL_NVDEC0_ERROR", "NVDEC0 Exception", ActionRestartApp, oHW, sErr, false},
	{69, "ROBUST_CHANNEL_GR_CLASS_ERROR", "Graphics Engine class error", ActionRestartApp, oApp, sErr, true},

	// 70-93: more copy engines, NVLink, vGPU, bus, video and JPEG engines, ECC rate, InfoROM.
	{70, "ROBUST_CHANNEL_CE3_ERROR", "CE3: Unknown Error", ActionRestartApp, oHW, sErr, true},
	{71, "ROBUST_CHANNEL_CE4_ERROR", "CE4: Unknown Error", ActionRestartApp, oHW, sErr, true},
	{72, "ROBUST_CHANNEL_CE5_ERROR", "CE5: Unknown Error", ActionRestartApp, oHW, sErr, true},
	unused(73, "ROBUST_CHANNEL_NVENC2_ERROR"),
	{74, "NVLINK_ERROR", "NVLINK Error", ActionWorkflowNVLinkErr, oHW, sErr, true},
	{75, "ROBUST_CHANNEL_CE6_ERROR", "CE6: Unknown Error", ActionRestartApp, oHW, sErr, true},
	{76, "ROBUST_CHANNEL_CE7_ERROR", "CE7: Unknown Error", ActionRestartApp, oHW, sErr, true},
	{77, "ROBUST_CHANNEL_CE8_ERROR", "CE8: Unknown Error", ActionRestartApp, oHW, sErr, true},
	{78, "VGPU_START_ERROR", "vGPU Start Error", ActionUpdateSWFW, oDrv, sErr, false},
	{79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "GPU has fallen off the bus", ActionRestartBM, oHW, sErr, true},
	{80, "PBDMA_PUSHBUFFER_CRC_MISMATCH", "Corrupted data sent to GPU", ActionRestartApp, oHW, sErr, true},
	unused(81, "ROBUST_CHANNEL_VGA_SUBSYSTEM_ERROR"),
	{82, "ROBUST_CHANNEL_NVJPG0_ERROR", "NVJPG0 Error", ActionRestartApp, oHW, sErr, false},
	{83, "ROBUST_CHANNEL_NVDEC1_ERROR", "NVDEC1 Error", ActionRestartApp, oHW, sErr, false},
	{84, "ROBUST_CHANNEL_NVDEC2_ERROR", "NVDEC2 Error", ActionRestartApp, oHW, sErr, false},
	{85, "ROBUST_CHANNEL_CE9_ERROR", "CE9: Unknown Error", ActionRestartApp, oHW, sErr, true},
	{86, "ROBUST_CHANNEL_OFA0_ERROR", "OFA Exception", ActionRestartApp, oHW, sErr, false},
	unused(87, "NVTELEMETRY_DRIVER_REPORT"),
	{88, "ROBUST_CHANNEL_NVDEC3_ERROR", "NVDEC3 Error", ActionRestartApp, oHW, sErr, false},
	{89, "ROBUST_CHANNEL_NVDEC4_ERROR", "NVDEC4 Error", ActionRestartApp, oHW, sErr, false},
	unused(90, "LTC_ERROR"),
	unused(91, "RESERVED_XID"),
	{92, "EXCESSIVE_SBE_INTERRUPTS", "High single-bit ECC error rate", ActionIgnore, oHW, sWarn, false},
	{93, "INFOROM_ERASE_LIMIT_EXCEEDED", "Non-fatal violation of provisioned InfoROM wear limit", ActionIgnore, oHW, sWarn, false},

	// 94-118: error containment, more video and JPEG engines, test messages, GSP-era faults, display.
	{94, "ROBUST_CHANNEL_CONTAINED_ERROR", "Contained memory error", ActionRestartApp, oHW, sErr, true},
	{95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "Uncontained memory error", ActionResetGPU, oHW, sErr, true},
	{96, "ROBUST_CHANNEL_NVDEC5_ERROR", "NVDEC5 Error", ActionRestartApp, oHW, sErr, false},
	{97, "ROBUST_CHANNEL_NVDEC6_ERROR", "NVDEC6 Error", ActionRestartApp, oHW, sErr, false},
	{98, "ROBUST_CHANNEL_NVDEC7_ERROR", "NVDEC7 Error", ActionRestartApp, oHW, sErr, false},
	{99, "ROBUST_CHANNEL_NVJPG1_ERROR", "NVJPG1 Error", ActionRestartApp, oHW, sErr, false},
	{100, "ROBUST_CHANNEL_NVJPG2_ERROR", "NVJPG2 Error", ActionRestartApp, oHW, sErr, false},
	{101, "ROBUST_CHANNEL_NVJPG3_ERROR", "NVJPG3 Error", ActionRestartApp, oHW, sErr, false},
	{102, "ROBUST_CHANNEL_NVJPG4_ERROR", "NVJPG4 Error", ActionRestartApp, oHW, sErr, false},
	{103, "ROBUST_CHANNEL_NVJPG5_ERROR", "NVJPG5 Error", ActionRestartApp, oHW, sErr, false},
	{104, "ROBUST_CHANNEL_NVJPG6_ERROR", "NVJPG6 Error", ActionRestartApp, oHW, sErr, false},
	{105, "ROBUST_CHANNEL_NVJPG7_ERROR", "NVJPG7 Error", ActionRestartApp, oHW, sErr, false},
	{106, "SMBPBI_TEST_MESSAGE", "SMBPBI Test Message", ActionIgnore, oUnk, sWarn, false},
	{107, "SMBPBI_TEST_MESSAGE_SILENT", "SMBPBI Test Message Silent", ActionIgnore, oUnk, sWarn, false},
	// 108: NVSentinel's file names it DESTINATION_FLA_TRANSLATION_ERROR.
	{108, "NVLINK_REMOTE_TRANSLATION_ERROR", "Unused", ActionIgnore, oUnk, sWarn, false},
	{109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "Context Switch Timeout Error", ActionResetGPU, oApp, sErr, true},
	// 110: "uncommon unless there is a hardware failure".
	{110, "SEC_FAULT_ERROR", "Security Fault Error", ActionResetGPU, oHW, sErr, true},
	unused(111, "BUNDLE_ERROR_EVENT"),
	unused(112, "DISP_SUPERVISOR_ERROR"),
	unused(113, "DP_LT_FAILURE"),
	unused(114, "HEAD_RG_UNDERFLOW"),
	unused(115, "CORE_CHANNEL_REGS"),
	unused(116, "WINDOW_CHANNEL_REGS"),
	unused(117, "CURSOR_CHANNEL_REGS"),
	unused(118, "HEAD_REGS"),

	// 119-143: GSP, C2C, SPI, copy engines 10-19, link training, NVLink privilege, ECC escape, init.
	{119, "GSP_RPC_TIMEOUT", "GSP RPC Timeout", ActionResetGPU, oDrv, sErr, true},
	{120, "GSP_ERROR", "GSP Error", ActionResetGPU, oDrv, sErr, true},
	// 121: corrected errors on the C2C NVLink to a Grace CPU, "no operational impact".
	{121, "C2C_ERROR", "C2C Error", ActionIgnore, oHW, sWarn, false},
	unused(122, "SPI_PMU_RPC_READ_FAIL"),
	unused(123, "SPI_PMU_RPC_WRITE_FAIL"),
	unused(124, "SPI_PMU_RPC_ERASE_FAIL"),
	unused(125, "INFOROM_FS_ERROR"),
	{126, "ROBUST_CHANNEL_CE10_ERROR", "CE10: Unknown Error", ActionRestartApp, oHW, sErr, true},
	{127, "ROBUST_CHANNEL_CE11_ERROR", "CE11: Unknown Error", ActionRestartApp, oHW, sErr, true},
	{128, "ROBUST_CHANNEL_CE12_ERROR", "CE12: Unknown Error", ActionRestartApp, oHW, sErr, true},
	{129, "ROBUST_CHANNEL_CE13_ERROR", "CE13: Unknown Error", ActionRestartApp, oHW, sErr, true},
	{130, "ROBUST_CHANNEL_CE14_ERROR", "CE14: Unknown Error", ActionRestartApp, oHW, sErr, true},
	{131, "ROBUST_CHANNEL_CE15_ERROR", "CE15: Unknown Error", ActionRestartApp, oHW, sErr, true},
	{132, "ROBUST_CHANNEL_CE16_ERROR", "CE16: Unknown Error", ActionRestartApp, oHW, sErr, true},
	{133, "ROBUST_CHANNEL_CE17_ERROR", "CE17: Unknown Error", ActionRestartApp, oHW, sErr, true},
	{134, "ROBUST_CHANNEL_CE18_ERROR", "CE18: Unknown Error", ActionRestartApp, oHW, sErr, true},
	{135, "ROBUST_CHANNEL_CE19_ERROR", "CE19: Unknown Error", ActionRestartApp, oHW, sErr, true},
	{136, "ALI_TRAINING_FAIL", "Link Training Failed", ActionResetGPU, oHW, sErr, true},
	// 137: a remote MMU fault, "typically application-level bugs". NVSentinel's
	// file names it NVLINK_FLA_PRIV_ERR.
	{137, "NVLINK_PRIV_ERR", "NVLink Privilege Error", ActionIgnore, oApp, sWarn, false},
	unused(138, "ROBUST_CHANNEL_DLA_ERROR"),
	{139, "ROBUST_CHANNEL_OFA1_ERROR", "OFA1 Error", ActionRestartApp, oHW, sErr, false},
	{140, "UNRECOVERABLE_ECC_ERROR_ESCAPE", "ECC Unrecovered Error", ActionResetGPU, oHW, sErr, true},
	{141, "ROBUST_CHANNEL_FAST_PATH_ERROR", "CUDA Fast Path Error", ActionIgnore, oDrv, sWarn, false},
	{142, "ROBUST_CHANNEL_NVENC3_ERROR", "NVENC3 Error", ActionContactSupport, oHW, sErr, false},
	{143, "GPU_INIT_ERROR", "GPU Initialization Error", ActionResetGPU, oHW, sErr, true},

	// 144-161: NVLink 5 units, confidential computing, DLA, recovery action, retirement.
	{144, "NVLINK_SAW_ERROR", "NVLINK: SAW Error", ActionWorkflowNVLink5Err, oHW, sErr, true},
	{145, "NVLINK_RLW_ERROR", "NVLINK: RLW Error", ActionWorkflowNVLink5Err, oHW, sErr, true},
	{146, "NVLINK_TLW_ERROR", "NVLINK: TLW Error", ActionWorkflowNVLink5Err, oHW, sErr, true},
	{147, "NVLINK_TREX_ERROR", "NVLINK: TREX Error", ActionWorkflowNVLink5Err, oHW, sErr, true},
	{148, "NVLINK_NVLPW_CTRL_ERROR", "NVLINK: NVLPW_CTRL Error", ActionWorkflowNVLink5Err, oHW, sErr, true},
	{149, "NVLINK_NETIR_ERROR", "NVLINK: NETIR Error", ActionWorkflowNVLink5Err, oHW, sErr, true},
	{150, "NVLINK_MSE_ERROR", "NVLINK: MSE Error", ActionWorkflowNVLink5Err, oHW, sErr, true},
	{151, "ROBUST_CHANNEL_KEY_ROTATION_ERROR", "Key rotation Error", ActionRestartVM, oDrv, sErr, true},
	{152, "ROBUST_CHANNEL_DLA_SMMU_ERROR", "DLA SMMU Error", ActionIgnore, oUnk, sWarn, false},
	{153, "ROBUST_CHANNEL_DLA_TIMEOUT", "DLA timeout Error", ActionIgnore, oUnk, sWarn, false},
	// 154 restates the recovery action another, separately reported Xid needs.
	// NVSentinel's file has free text for its action; the catalog's XID_154 is kept.
	{154, "GPU_RECOVERY_ACTION_CHANGED", "GPU Recovery Action Changed", ActionXid154, oDrv, sWarn, false},
	// 155: link down events flagged as intentional.
	{155, "NVLINK_SW_DEFINED_ERROR", "NVLINK: SW Defined Error", ActionResetGPU, oDrv, sErr, true},
	{156, "RESOURCE_RETIREMENT_EVENT", "Resource Retirement Event", ActionResetGPU, oHW, sErr, true},
	{157, "RESOURCE_RETIREMENT_FAILURE", "Resource Retirement Failure", ActionIgnore, oHW, sWarn, false},
	{158, "GPU_FATAL_TIMEOUT", "GPU Fatal Timeout", ActionResetGPU, oHW, sErr, true},
	// 159: "may be seen on any C2C link-connected GPU".
	{159, "ROBUST_CHANNEL_CHI_NON_DATA_ERROR", "CHI Non-Data Error", ActionCheckUVM, oHW, sErr, false},
	// 160: NVSentinel's file says RESTART_BM; the catalog says IGNORE.
	{160, "CHANNEL_RETIREMENT_EVENT", "Channel Retirement Event", ActionIgnore, oDrv, sWarn, false},
	{161, "CHANNEL_RETIREMENT_FAILURE", "Channel Retirement Failure", ActionIgnore, oDrv, sWarn, false},

	// 162-172: the catalog publishes no immediate action for these (NVSentinel's
	// file stops at 162, with no mnemonic and RESET_GPU).
	{162, "PSHC_REENGAGED", "Power Smoothing HW Circuitry capability reengaged", ActionNone, oHW, sWarn, false},
	{163, "PSHC_DISENGAGED", "Power Smoothing HW Circuitry capability disengaged", ActionNone, oHW, sWarn, false},
	{164, "PSHC_LOW_LIFETIME", "Power Smoothing HW Circuitry low lifetime reached", ActionNone, oHW, sWarn, false},
	{165, "PSHC_ZERO_LIFETIME", "Power Smoothing HW Circuitry lifetime exhausted", ActionNone, oHW, sWarn, false},
	{166, "NVLINK_SECURE_CRYPTO_ERR", "CC traffic seen prior to link properly being configured for encrypted traffic", ActionNone, oDrv, sWarn, false},
	{167, "PCIE_FATAL_TIMEOUT", "PCIE_FATAL_TIMEOUT", ActionNone, oHW, sErr, false},
	{168, "REDUCED_GPU_MEMORY_CAPACITY", "Errors found in WPR (write protected region)", ActionNone, oHW, sErr, false},
	{169, "SEC2_HALT_ERROR", "Internal micro-controller halt", ActionNone, oHW, sErr, false},
	{170, "NVLINK_SECURE_OTHER", "Interrupt seen in CC mode", ActionNone, oDrv, sWarn, false},
	{171, "UNCORRECTABLE_DRAM_ERROR", "Additional to Xid 48 providing more details on particulars of fault to differentiate DRAM/SRAM", ActionNone, oHW, sErr, false},
	{172, "UNCORRECTABLE_SRAM_ERROR", "Additional to Xid 48 providing more details on particulars of fault to differentiate DRAM/SRAM", ActionNone, oHW, sErr, false},
}
