package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"sigs.k8s.io/yaml"
)

// crdKeyPrefix is where the apiextensions-apiserver keeps CRDs in etcd: its
// default etcd prefix, then the resource prefix of the CRD registry.
const crdKeyPrefix = "/registry/apiextensions.kubernetes.io/apiextensions.k8s.io/customresourcedefinitions/"

// seedLegacyCRDs writes CustomResourceDefinitions straight into etcd, past
// the API server's validation, as they are left in clusters upgraded from
// the days of apiextensions.k8s.io/v1beta1: schemas that are not structural,
// which no API server accepts any more but every one still serves (with the
// NonStructuralSchema condition). The files are YAML or JSON
// apiextensions.k8s.io/v1beta1 CRDs; the server reads that version from etcd.
func seedLegacyCRDs(endpoint string, files []string) error {
	if len(files) == 0 {
		return nil
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	defer client.Close()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			return fmt.Errorf("%s: %v", f, err)
		}
		var crd struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(js, &crd); err != nil {
			return fmt.Errorf("%s: %v", f, err)
		}
		if crd.APIVersion != "apiextensions.k8s.io/v1beta1" || crd.Kind != "CustomResourceDefinition" || crd.Metadata.Name == "" {
			return fmt.Errorf("%s: not a named apiextensions.k8s.io/v1beta1 CustomResourceDefinition", f)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = client.Put(ctx, crdKeyPrefix+crd.Metadata.Name, string(js))
		cancel()
		if err != nil {
			return fmt.Errorf("%s: writing to etcd: %v", f, err)
		}
	}
	return nil
}
