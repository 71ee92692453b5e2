package gpumemreceiver

import (
	"fmt"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

// describe fills the GPU's (or MIG instance's) resource attributes.
func describe(res metadata.Resource, d *nvmlx.Device, driverVersion string) {
	res.SetStr(metadata.ResHwID, d.UUID)
	res.SetStr(metadata.ResHwType, metadata.AttrHwTypeGpu)
	res.SetStr(metadata.ResHwVendor, metadata.ResHwVendorNvidia)
	res.SetStr(metadata.ResHwName, shortName(d))
	res.SetStr(metadata.ResHwModel, d.Name)
	res.SetStr(metadata.ResHwDriverVersion, driverVersion)
	firmware := d.Firmware
	if d.Parent != nil {
		firmware = d.Parent.Firmware // a board property: NVML answers it for the GPU
	}
	res.SetStr(metadata.ResHwFirmwareVersion, firmware)
	res.SetStr(metadata.ResHwSerialNumber, d.Serial)
	res.SetInt(metadata.ResNvidiaGpuIndex, int64(d.Index))
	res.SetStr(metadata.ResNvidiaGpuPciBusID, d.BusID)
	if d.Parent != nil {
		res.SetStr(metadata.ResHwParent, d.Parent.UUID)
		res.SetInt(metadata.ResNvidiaGpuMigGpuInstanceID, d.GPUInstanceID)
		res.SetInt(metadata.ResNvidiaGpuMigComputeInstanceID, d.ComputeInstanceID)
		res.SetStr(metadata.ResNvidiaGpuMigProfile, d.Profile)
	}
}

// shortName is hw.name: semconv asks for an easily recognised name, and "GPU 3" is how
// nvidia-smi and NVIDIA's tools number the boards (NVML index). A MIG instance adds its GPU
// and compute instance ids, the pair MIG device addressing uses (nvidia-smi mig -lci).
func shortName(d *nvmlx.Device) string {
	if d.Parent != nil {
		return fmt.Sprintf("GPU %d MIG %d/%d", d.Index, d.GPUInstanceID, d.ComputeInstanceID)
	}
	return fmt.Sprintf("GPU %d", d.Index)
}
