package simnvml

import (
	"reflect"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

var returnType = reflect.TypeFor[nvml.Return]()

// fillNotSupported sets every nil XxxFunc field of a go-nvml mock (a pointer
// to mock.Interface, mock.Device, mock.EventSet, …) to a function answering
// zero values and ERROR_NOT_SUPPORTED, so a call the simulator does not model
// looks like a feature the device lacks instead of panicking the collector.
func fillNotSupported(mockPtr any) {
	v := reflect.ValueOf(mockPtr).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() != reflect.Func || !f.IsNil() || !f.CanSet() {
			continue
		}
		ft := f.Type()
		out := make([]reflect.Value, ft.NumOut())
		for j := range out {
			if ft.Out(j) == returnType {
				out[j] = reflect.ValueOf(nvml.ERROR_NOT_SUPPORTED)
			} else {
				out[j] = reflect.Zero(ft.Out(j))
			}
		}
		f.Set(reflect.MakeFunc(ft, func([]reflect.Value) []reflect.Value { return out }))
	}
}
