package gpumemreceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/xidsource"
)

// Every Xid record carries NVIDIA's mnemonic and immediate action beside description and
// origin; a code without them in the catalog carries neither, rather than an empty string.
func TestXidRecordCarriesCatalogEntry(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	events := []xidsource.Event{
		{Time: at, Code: 79, BusID: "00000000:3B:00.0", Kmsg: true},
		{Time: at, Code: 95, BusID: "00000000:3B:00.0", NVML: true},
		{Time: at, Code: 165, BusID: "00000000:3B:00.0", Kmsg: true},  // the catalog publishes no action
		{Time: at, Code: 9999, BusID: "00000000:3B:00.0", Kmsg: true}, // not in the catalog
	}
	switches := metadata.NewResourceSwitches(metadata.DefaultMetricsBuilderConfig().ResourceAttributes)
	ld := xidLogs(events, "570.86.15", switches, "test", pcommon.NewTimestampFromTime(at))
	require.Equal(t, 4, ld.LogRecordCount())
	recs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()

	a := recs.At(0).Attributes().AsRaw()
	assert.Equal(t, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", a["nvidia.gpu.xid.mnemonic"])
	assert.Equal(t, "RESTART_BM", a["nvidia.gpu.xid.action"])
	assert.Equal(t, "GPU has fallen off the bus", a["nvidia.gpu.xid.description"])
	assert.Equal(t, "hardware", a["nvidia.gpu.xid.origin"])

	a = recs.At(1).Attributes().AsRaw()
	assert.Equal(t, "ROBUST_CHANNEL_UNCONTAINED_ERROR", a["nvidia.gpu.xid.mnemonic"])
	assert.Equal(t, "RESET_GPU", a["nvidia.gpu.xid.action"])
	assert.Equal(t, "Uncontained memory error", a["nvidia.gpu.xid.description"])

	a = recs.At(2).Attributes().AsRaw()
	assert.Equal(t, "PSHC_ZERO_LIFETIME", a["nvidia.gpu.xid.mnemonic"])
	assert.NotContains(t, a, "nvidia.gpu.xid.action")

	a = recs.At(3).Attributes().AsRaw()
	assert.NotContains(t, a, "nvidia.gpu.xid.mnemonic")
	assert.NotContains(t, a, "nvidia.gpu.xid.action")
	assert.Equal(t, "unknown", a["nvidia.gpu.xid.origin"])
}
