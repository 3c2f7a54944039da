package main

import (
	"context"
	"errors"
	"strings"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Users with restricted rights, each with a bearer token of the same name (or the name,
// a dash and anything: a test's own secret) and a "<context>-<name>" context in the kubeconfig, so that tests get real 403s from
// the server: a 403 worded by the server, not by a fake.
const (
	// deniedUser is refused everything, discovery included.
	deniedUser = "denied"
	// crdsOnlyUser may read CustomResourceDefinitions (get, list, watch) and
	// nothing else: no custom resources.
	crdsOnlyUser = "crds-only"
	// objectsOnlyUser may do anything to any resource but CustomResourceDefinitions.
	objectsOnlyUser = "objects-only"
)

// refusedTokenPrefix marks tokens the server refuses (401 Unauthorized), as a
// real server refuses an expired or revoked token.
const refusedTokenPrefix = "refused-"

var restrictedUsers = []string{deniedUser, crdsOnlyUser, objectsOnlyUser}

// authenticator: a restricted user's token is that user; a refused token is
// 401; no token or any other token is system:anonymous.
func newAuthenticator() authenticator.Request {
	tokens := authenticator.TokenFunc(func(ctx context.Context, token string) (*authenticator.Response, bool, error) {
		if strings.HasPrefix(token, refusedTokenPrefix) {
			return nil, false, errors.New("the test server refuses this token")
		}
		for _, u := range restrictedUsers {
			if token == u || strings.HasPrefix(token, u+"-") {
				return &authenticator.Response{User: &user.DefaultInfo{Name: u}}, true, nil
			}
		}
		return &authenticator.Response{User: &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}}, true, nil
	})
	// Fail on error, as kube-apiserver puts anonymous behind its token authenticators:
	// a token that is refused is 401, not anonymous.
	return union.NewFailOnError(bearertoken.New(tokens), anonymous.NewAuthenticator(nil))
}

// authorizer: the restricted users get their rules, everyone else everything.
func newAuthorizer() authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if a.GetUser() == nil {
			return authorizer.DecisionAllow, "", nil
		}
		isCRD := a.IsResourceRequest() && a.GetAPIGroup() == "apiextensions.k8s.io" && a.GetResource() == "customresourcedefinitions"
		switch a.GetUser().GetName() {
		case deniedUser:
			return authorizer.DecisionDeny, "the test server denies this user everything", nil
		case crdsOnlyUser:
			// Discovery (non-resource URLs) is everyone's in a real cluster (system:discovery).
			if !a.IsResourceRequest() || isCRD && (a.GetVerb() == "get" || a.GetVerb() == "list" || a.GetVerb() == "watch") {
				return authorizer.DecisionAllow, "", nil
			}
			return authorizer.DecisionDeny, "the test server lets this user read CustomResourceDefinitions only", nil
		case objectsOnlyUser:
			if !isCRD {
				return authorizer.DecisionAllow, "", nil
			}
			return authorizer.DecisionDeny, "the test server lets this user have anything but CustomResourceDefinitions", nil
		}
		return authorizer.DecisionAllow, "", nil
	})
}
