package main

import (
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig with two contexts on the same server and user, which
// differ only in namespace, for tests of --context and -n, and one context per restricted
// user (<name>-denied, <name>-crds-only, <name>-objects-only) and <name>-refused, whose
// token the server refuses (401).
func writeKubeconfig(path, server, caFile, contextName string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[contextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: caFile}
	// The server ignores the token, but without any credentials kubectl prompts for a username.
	kc.AuthInfos[contextName] = &clientcmdapi.AuthInfo{Token: "anything"}
	kc.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName, Namespace: "default"}
	kc.Contexts[contextName+"-other"] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName, Namespace: "other"}
	// Users the server refuses some or all requests, for tests of 403 Forbidden, and a refused token.
	for _, u := range append(restrictedUsers, "refused") {
		token := u
		if u == "refused" {
			token = refusedTokenPrefix + "token"
		}
		name := contextName + "-" + u
		kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
		kc.Contexts[name] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: name, Namespace: "default"}
	}
	kc.CurrentContext = contextName
	return clientcmd.WriteToFile(*kc, path)
}

// writeDeadKubeconfig writes a kubeconfig for options that require one for the core API (which
// this server lacks). 127.1.2.3:12345 refuses connections at once instead of hanging.
func writeDeadKubeconfig(path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["none"] = &clientcmdapi.Cluster{Server: "http://127.1.2.3:12345"}
	kc.Contexts["none"] = &clientcmdapi.Context{Cluster: "none"}
	kc.CurrentContext = "none"
	return clientcmd.WriteToFile(*kc, path)
}
