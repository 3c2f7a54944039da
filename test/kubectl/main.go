// Command kubectl is kubectl built from k8s.io/kubectl at the version in this
// module's go.mod, for the end-to-end tests: plugin discovery and argument
// passing of the kubectl release that matches the API server code we embed.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
