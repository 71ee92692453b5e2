package metadata

// ResourceAttrID indexes ResourceAttributes.
type ResourceAttrID int

const (
	ResHwID ResourceAttrID = iota
	ResHwType
	ResHwVendor
	ResHwName
	ResHwModel
	ResHwDriverVersion
	ResHwFirmwareVersion
	ResHwSerialNumber
	ResHwParent
	ResNvidiaGpuIndex
	ResNvidiaGpuPciBusID
	ResNvidiaGpuMigGpuInstanceID
	ResNvidiaGpuMigComputeInstanceID
	ResNvidiaGpuMigProfile
	resourceAttrCount
)

// ResourceAttrDef describes one resource attribute as metadata.yaml does.
type ResourceAttrDef struct {
	Name        string
	Type        string // string or int
	Description string
	Enabled     bool
}

// ResourceAttributes is the receiver's resource attribute table, indexed by ResourceAttrID.
var ResourceAttributes = [resourceAttrCount]ResourceAttrDef{
	ResHwID:            {Name: "hw.id", Type: "string", Enabled: true, Description: "GPU UUID (GPU-...); for a MIG instance its MIG UUID (MIG-...)."},
	ResHwType:          {Name: "hw.type", Type: "string", Enabled: true, Description: "Always gpu."},
	ResHwVendor:        {Name: "hw.vendor", Type: "string", Enabled: true, Description: "Always nvidia."},
	ResHwName:          {Name: "hw.name", Type: "string", Enabled: true, Description: "Short name: GPU <index>, e.g. GPU 3 (nvidia-smi's numbering); for a MIG instance GPU <index> MIG <gpu instance id>/<compute instance id>, e.g. GPU 7 MIG 3/0."},
	ResHwModel:         {Name: "hw.model", Type: "string", Enabled: true, Description: "Product name NVML gives, e.g. NVIDIA H100 80GB HBM3; for a MIG instance the MIG device name, e.g. NVIDIA A100-SXM4-40GB MIG 1g.5gb."},
	ResHwDriverVersion: {Name: "hw.driver_version", Type: "string", Enabled: true, Description: "NVIDIA driver version."},
	ResHwFirmwareVersion: {Name: "hw.firmware_version", Type: "string", Enabled: true,
		Description: "VBIOS version, e.g. 96.00.89.00.01, where NVML gives it (for a MIG instance, its parent GPU's)."},
	ResHwSerialNumber: {Name: "hw.serial_number", Type: "string", Enabled: true, Description: "Board serial number, where NVML gives it."},
	ResHwParent:       {Name: "hw.parent", Type: "string", Enabled: true, Description: "MIG instance only: the parent GPU's UUID."},
	ResNvidiaGpuIndex: {Name: "nvidia.gpu.index", Type: "int", Enabled: true, Description: "NVML device index (for a MIG instance, its parent GPU's)."},
	ResNvidiaGpuPciBusID: {Name: "nvidia.gpu.pci.bus_id", Type: "string", Enabled: true,
		Description: "PCI bus id as NVML prints it, e.g. 00000000:3B:00.0 (for a MIG instance, its parent GPU's)."},
	ResNvidiaGpuMigGpuInstanceID:     {Name: "nvidia.gpu.mig.gpu_instance_id", Type: "int", Enabled: true, Description: "MIG only: GPU instance id."},
	ResNvidiaGpuMigComputeInstanceID: {Name: "nvidia.gpu.mig.compute_instance_id", Type: "int", Enabled: true, Description: "MIG only: compute instance id."},
	ResNvidiaGpuMigProfile:           {Name: "nvidia.gpu.mig.profile", Type: "string", Enabled: true, Description: "MIG only: the instance profile, e.g. 1g.10gb, taken from the MIG device name."},
}

// ResourceAttrByName returns the ID of a resource attribute name.
func ResourceAttrByName(name string) (ResourceAttrID, bool) {
	for i := range ResourceAttributes {
		if ResourceAttributes[i].Name == name {
			return ResourceAttrID(i), true
		}
	}
	return 0, false
}
