package node

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpumem/otelcol-gpumem/internal/simkubelet"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/simnvml"
)

// The kubelet's own paths, the receiver's defaults: a simulated node never reads the host's.
const (
	DefaultPodResourcesSocket = "/var/lib/kubelet/pod-resources/kubelet.sock"
	DefaultPodLogsDir         = "/var/log/pods"
)

// simKubelet is a simulated node's kubelet as the receiver sees it.
type simKubelet struct {
	socket, podLogs string
	server          *simkubelet.Server
}

func (k simKubelet) stop() {
	if k.server != nil {
		k.server.Stop()
	}
}

// simulatedKubelet decides where a simulated node's kubelet is read. A path the user set is
// kept: a test's own PodResources server, or a pod log directory it reads with file_log.
// A default path is replaced: with scenario pods by a PodResources server on a socket of the
// simulator's own (and a pod log directory there) serving them, without pods by nothing.
func simulatedKubelet(cfg Config, scn *simnvml.Scenario, own *ownedDir) (simKubelet, error) {
	k := simKubelet{socket: cfg.PodResourcesSocket, podLogs: cfg.PodLogsDir}
	if k.podLogs == DefaultPodLogsDir {
		k.podLogs = ""
		if len(scn.Pods) > 0 {
			dir, err := own.get()
			if err != nil {
				return simKubelet{}, err
			}
			k.podLogs = filepath.Join(dir, "log", "pods")
		}
	}
	if k.socket != DefaultPodResourcesSocket {
		return k, nil
	}
	k.socket = ""
	if len(scn.Pods) == 0 {
		return k, nil
	}
	dir, err := own.get()
	if err != nil {
		return simKubelet{}, err
	}
	k.socket = filepath.Join(dir, "kubelet.sock")
	k.server = simkubelet.New(simkubelet.Options{})
	k.server.SetPods(scn.KubeletPods())
	if err := k.server.Start(k.socket); err != nil {
		return simKubelet{}, fmt.Errorf("serve the scenario's pods: %w", err)
	}
	return k, nil
}

// ownedDir is the simulator's own temporary directory, made on first use and removed on
// a failed start unless kept.
type ownedDir struct {
	path string
	kept bool
}

func (o *ownedDir) get() (string, error) {
	if o.path == "" {
		dir, err := os.MkdirTemp("", "gpumem-sim-")
		if err != nil {
			return "", err
		}
		o.path = dir
	}
	return o.path, nil
}

// keep hands the directory to the backend: the returned func removes it.
func (o *ownedDir) keep() func() {
	o.kept = true
	path := o.path
	return func() {
		if path != "" {
			_ = os.RemoveAll(path)
		}
	}
}

func (o *ownedDir) removeUnlessKept() {
	if !o.kept && o.path != "" {
		_ = os.RemoveAll(o.path)
	}
}
