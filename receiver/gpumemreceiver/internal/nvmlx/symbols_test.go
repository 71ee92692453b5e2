package nvmlx

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// A call whose symbol the library lacks starts unsupported on every device, and stays so
// when the probes are reset; the missing symbols are listed in probe order.
func TestMissingSymbolsStartUnsupported(t *testing.T) {
	lib := fakeLib(1, symRemappedRows, symMemoryInfoV2, symSupportedEventTypes)
	require.Equal(t, nvml.SUCCESS, lib.Init())
	syms := probeSymbols(lib)
	assert.Equal(t, []string{symMemoryInfoV2, symRemappedRows, symSupportedEventTypes}, syms.missingList())

	devices, _, err := discover(lib, &syms, zap.NewNop())
	require.NoError(t, err)
	require.Len(t, devices, 1)
	d := devices[0]
	for range 2 {
		assert.Equal(t, Unsupported, d.Initial(CallMemoryInfoV2))
		assert.Equal(t, Unsupported, d.Initial(CallRemappedRows))
		assert.Equal(t, SupportUnknown, d.Initial(CallEccMode))
		assert.False(t, d.HasEventCalls())
		d.resetProbes()
	}
}

// A library that cannot tell (go-nvml's mock without extensions, the simulator) has all.
func TestNilSymbolsHaveAll(t *testing.T) {
	var syms *driverSymbols
	assert.True(t, syms.has(probedSymbols...))
	assert.Equal(t, SupportUnknown, syms.initial(symMigMode))
}

func TestSupportCheck(t *testing.T) {
	var s Support
	ok, err := s.Check(nvml.SUCCESS)
	assert.True(t, ok)
	assert.NoError(t, err)
	assert.Equal(t, Supported, s)

	ok, err = s.Check(nvml.ERROR_UNKNOWN)
	assert.False(t, ok)
	assert.ErrorIs(t, err, nvml.ERROR_UNKNOWN)
	assert.Equal(t, Supported, s, "a failure does not change what was found")

	for _, r := range []nvml.Return{nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND} {
		s = SupportUnknown
		ok, err = s.Check(r)
		assert.False(t, ok)
		assert.NoError(t, err)
		assert.Equal(t, Unsupported, s)
	}
}
