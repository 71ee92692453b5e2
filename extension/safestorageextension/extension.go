package safestorageextension

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/extension/safestorageextension/internal/metadata"
)

var _ storage.Extension = (*safeStorage)(nil)

// corruptSuffix ends the name of a database moved aside; contrib's recreate uses ".backup".
const corruptSuffix = ".corrupt"

// safeStorage is contrib's file_storage with its directory's databases checked at Start,
// which the collector runs before any component asks for a client.
type safeStorage struct {
	cfg    *Config
	inner  storage.Extension
	logger *zap.Logger
	tel    *metadata.TelemetryBuilder
	check  func(ctx context.Context, path string, timeout, lockTimeout time.Duration) verdict
	now    func() time.Time
}

func (s *safeStorage) Start(ctx context.Context, host component.Host) error {
	if err := s.guard(ctx); err != nil {
		return err
	}
	return s.inner.Start(ctx, host)
}

func (s *safeStorage) Shutdown(ctx context.Context) error { return s.inner.Shutdown(ctx) }

func (s *safeStorage) GetClient(ctx context.Context, kind component.Kind, id component.ID, name string) (storage.Client, error) {
	return s.inner.GetClient(ctx, kind, id, name)
}

// guard checks every database file of the directory and moves the damaged ones aside, so that
// file_storage creates them anew.
func (s *safeStorage) guard(ctx context.Context) error {
	entries, err := os.ReadDir(s.cfg.Directory)
	if err != nil {
		if os.IsNotExist(err) {
			return nil // a first start: file_storage creates the directory and the files
		}
		return fmt.Errorf("list storage directory %s: %w", s.cfg.Directory, err)
	}
	for _, e := range entries {
		name := e.Name()
		// Compaction's temporary copies, and files already moved aside, are no component's.
		if !e.Type().IsRegular() || strings.HasPrefix(name, filestorage.TempDbPrefix) ||
			strings.HasSuffix(name, corruptSuffix) || strings.HasSuffix(name, ".backup") {
			continue
		}
		if err := s.guardFile(ctx, filepath.Join(s.cfg.Directory, name)); err != nil {
			return err
		}
	}
	return nil
}

func (s *safeStorage) guardFile(ctx context.Context, path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat storage file %s: %w", path, err)
	}
	var v verdict
	var damage string
	if info.Size() == 0 {
		// bbolt writes its four first pages when it creates a file, so an empty one was emptied
		// (a truncation, a full disk); bbolt would start it afresh without a word.
		v, damage = verdict{Status: statusCorrupt, Damage: "the file is empty (0 bytes)"}, "empty"
	} else {
		v, damage = s.check(ctx, path, s.cfg.CheckTimeout, s.cfg.Timeout), "corrupt"
	}
	switch v.Status {
	case statusOK:
		if v.Damage != "" {
			s.logger.Warn("One of the storage file's two meta pages is damaged; bbolt opens it on the other, and only the last write before it stopped may be lost",
				zap.String("file", path), zap.String("damage", v.Damage))
		}
		return nil
	case statusUndecided:
		s.logger.Warn("Could not check the storage file; opening it as it is",
			zap.String("file", path), zap.String("reason", v.Damage))
		return nil
	}
	moved := fmt.Sprintf("%s.%s%s", path, s.now().UTC().Format("20060102T150405Z"), corruptSuffix)
	if err := os.Rename(path, moved); err != nil {
		return fmt.Errorf("move damaged storage file %s aside (%s): %w", path, v.Damage, err)
	}
	s.logger.Error("The storage file is damaged: moved aside and started empty; everything it held (queued data, file offsets) is lost",
		zap.String("file", path),
		zap.String("moved_to", moved),
		zap.Int64("size_bytes", info.Size()),
		zap.String("damage", v.Damage))
	s.tel.DatabasesDiscarded.Add(ctx, 1, metric.WithAttributes(attribute.String("damage", damage)))
	return nil
}
