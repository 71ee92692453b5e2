package gpumemreceiver

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

// Persistence mode is Linux only and answers NOT_SUPPORTED on Windows and on parts without
// it; compute mode is on every part from Fermi on (NVML API reference,
// https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html). Each is probed once.

// computeModes are the modes a current driver reports, in the order of their points.
// EXCLUSIVE_THREAD was removed in CUDA 8 and is never reported; a mode not listed here gives
// 0 on every point.
var computeModes = [...]struct {
	mode nvml.ComputeMode
	name string
}{
	{nvml.COMPUTEMODE_DEFAULT, metadata.AttrNvidiaGpuComputeModeDefault},
	{nvml.COMPUTEMODE_EXCLUSIVE_PROCESS, metadata.AttrNvidiaGpuComputeModeExclusiveProcess},
	{nvml.COMPUTEMODE_PROHIBITED, metadata.AttrNvidiaGpuComputeModeProhibited},
}

// modesState is the modes concern's per-device state: whether each call works.
type modesState struct{ persistence, compute nvmlx.Support }

func (st *modesState) probe(d *nvmlx.Device) {
	st.persistence = d.Initial(nvmlx.CallPersistenceMode)
	st.compute = d.Initial(nvmlx.CallComputeMode)
}

// recordModes records persistence and compute mode. The two calls are independent: one
// failing costs its own metric only.
func recordModes(mb *metadata.MetricsBuilder, d *nvmlx.Device, st *modesState, ts pcommon.Timestamp) (lost int, err error) {
	var persistenceErr, computeErr error
	if st.persistence != nvmlx.Unsupported && mb.Enabled(metadata.NvidiaGpuPersistenceMode) {
		mode, r := d.Handle.GetPersistenceMode()
		if ok, err := st.persistence.Check(r); err != nil {
			lost, persistenceErr = lost+1, fmt.Errorf("read persistence mode of GPU %s: %w", d.UUID, err)
		} else if ok {
			mb.RecordInt(metadata.NvidiaGpuPersistenceMode, ts, boolInt(mode == nvml.FEATURE_ENABLED))
		}
	}
	if st.compute != nvmlx.Unsupported && mb.Enabled(metadata.NvidiaGpuComputeMode) {
		mode, r := d.Handle.GetComputeMode()
		if ok, err := st.compute.Check(r); err != nil {
			lost, computeErr = lost+1, fmt.Errorf("read compute mode of GPU %s: %w", d.UUID, err)
		} else if ok {
			for _, m := range computeModes {
				if dp, ok := mb.RecordInt(metadata.NvidiaGpuComputeMode, ts, boolInt(mode == m.mode)); ok {
					dp.Attributes().PutStr(metadata.AttrNvidiaGpuComputeMode, m.name)
				}
			}
		}
	}
	return lost, errors.Join(persistenceErr, computeErr)
}
