package oomclassifier

import (
	"hash/maphash"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// streams links the records of one scope to the next record of the same log stream (equal
// values, or absence, of every sourceKeys attribute), for stitch. It is built in one pass,
// lazily: from the first head on, and only as far as a head's continuations need, so a batch
// without an OOM costs nothing and every record is indexed at most once, whatever the number
// of heads and streams. The state per stream is its last indexed record.
type streams struct {
	lrs  plog.LogRecordSlice
	base int     // the first record indexed (the first head)
	done int     // records [base, done) are indexed
	link []int32 // link[i-base]: the next record of i's stream, 0 none found yet
	// The state per stream: its last indexed record, found by the stream key's hash. (A map
	// keyed by the key itself spent most of its time rehashing four strings as it grew.) A
	// hit is checked against the last record's own key; a stream whose hash another holds
	// goes to collided.
	tail     map[uint64]int32
	collided map[streamKey]int32
	// work counts the records indexed and the links followed, for the tests.
	work int
}

func newStreams(lrs plog.LogRecordSlice) streams { return streams{lrs: lrs, base: -1} }

// next returns the index of the record after i in i's stream, -1 if the scope has none.
// Heads ask in increasing order of i, from the first head on.
func (sx *streams) next(i int) int {
	if sx.base < 0 {
		sx.base, sx.done = i, i
		sx.link = make([]int32, sx.lrs.Len()-i)
		sx.tail = make(map[uint64]int32)
	}
	sx.work++
	// A link is known once the record after i in its stream is indexed; until then index on.
	for (sx.done <= i || sx.link[i-sx.base] == 0) && sx.done < sx.lrs.Len() {
		sx.index(sx.done)
		sx.done++
	}
	if l := sx.link[i-sx.base]; l > 0 {
		return int(l)
	}
	return -1
}

func (sx *streams) index(j int) {
	sx.work++
	k := keyOf(sx.lrs.At(j).Attributes(), j)
	h := streamHash(k)
	t, ok := sx.tail[h]
	switch {
	case !ok:
		sx.tail[h] = int32(j)
	case keyOf(sx.lrs.At(int(t)).Attributes(), int(t)) == k:
		sx.link[int(t)-sx.base] = int32(j)
		sx.tail[h] = int32(j)
	default: // another stream's hash
		if sx.collided == nil {
			sx.collided = make(map[streamKey]int32)
		}
		if t, ok := sx.collided[k]; ok {
			sx.link[int(t)-sx.base] = int32(j)
		}
		sx.collided[k] = int32(j)
	}
}

var streamSeed = maphash.MakeSeed()

// streamHash is a variable for the tests, which make every stream collide.
var streamHash = func(k streamKey) uint64 { return maphash.Comparable(streamSeed, k) }

// streamKey is a record's stream: one streamValue per sourceKeys attribute. Two records have
// equal keys exactly when every source attribute is absent in both or Value.Equal in both
// (maps and slices compare by their JSON form, so in their order).
type streamKey [len(sourceKeys)]streamValue

type streamValue struct {
	typ uint8 // 0 absent, else the pcommon.ValueType + 1; nanType a NaN
	s   string
	n   int64
}

// nanType: a NaN equals nothing, not even itself, so its value is the record's own index.
const nanType = 0xff

func keyOf(attrs pcommon.Map, j int) streamKey {
	var k streamKey
	for i, name := range sourceKeys {
		v, ok := attrs.Get(name)
		if !ok {
			continue
		}
		sv := streamValue{typ: uint8(v.Type()) + 1}
		switch v.Type() {
		case pcommon.ValueTypeStr:
			sv.s = v.Str()
		case pcommon.ValueTypeInt:
			sv.n = v.Int()
		case pcommon.ValueTypeBool:
			if v.Bool() {
				sv.n = 1
			}
		case pcommon.ValueTypeDouble:
			switch f := v.Double(); {
			case math.IsNaN(f):
				sv.typ, sv.n = nanType, int64(j)
			case f != 0: // -0 == 0
				sv.n = int64(math.Float64bits(f))
			}
		case pcommon.ValueTypeEmpty:
		default: // bytes, map, slice
			sv.s = v.AsString()
		}
		k[i] = sv
	}
	return k
}
