package nvmlx

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpumem/otelcol-gpumem/test/fakenvml"
)

// The check only opens and looks up, so it runs in-process on any library. (The receiver's
// notnvml_test.go runs the whole start on each library in a child process.)
func TestCheckLibrary(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []fakenvml.Variant{fakenvml.Full, fakenvml.R450, fakenvml.NoMIG, fakenvml.NoRemap} {
		assert.NoError(t, CheckLibrary(fakenvml.MustBuild(t, dir, v)), "the stand-in driver %s has every required call", v.Name)
	}

	libz := "/lib/x86_64-linux-gnu/libz.so.1"
	if _, err := os.Stat(libz); err == nil {
		err := CheckLibrary(libz)
		var notNVML *NotNVMLError
		require.ErrorAs(t, err, &notNVML)
		assert.Equal(t, libz, notNVML.Path)
		require.Len(t, notNVML.Missing, len(requiredSymbols), "lacks every call, each named once")
		assert.Equal(t, "nvmlInit_v2", notNVML.Missing[0])
		assert.Contains(t, err.Error(), libz+" is not the NVIDIA driver's NVML library: it lacks nvmlInit_v2, nvmlShutdown, nvmlErrorString,")
	}

	text := filepath.Join(dir, "libnvidia-ml.so.1")
	require.NoError(t, os.WriteFile(text, []byte("not ELF"), 0o600))
	for _, path := range []string{text, filepath.Join(dir, "absent.so")} {
		err := CheckLibrary(path)
		require.Error(t, err)
		var notNVML *NotNVMLError
		assert.NotErrorAs(t, err, &notNVML, "a library that does not load is a missing driver")
		assert.Contains(t, err.Error(), "open NVML library "+path)
	}
}
