package main

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// startEtcd runs a single-member etcd inside this process, so that stopping the server can
// leave no etcd behind. The peer port is clientPort+1; nothing but this member uses it.
func startEtcd(dir, logFile string, clientPort int) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", clientPort)}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", clientPort+1)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// Test data is disposable: without fsync no write waits for the disk.
	cfg.UnsafeNoFsync = true
	// A file of its own: etcd logs errors for its own orderly shutdown, which would read as failures
	// at the end of every server log. Startup errors are returned, runtime errors logged by run.
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{logFile}

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, err
	case <-time.After(30 * time.Second):
		e.Close()
		return nil, errors.New("etcd not ready after 30s")
	}
}
