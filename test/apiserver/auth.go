package main

import (
	"context"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// deniedToken authenticates as deniedUser, whom the authorizer refuses
// everything: the kubeconfig's "<context>-denied" context uses it, so that
// tests get a real 403 from the server.
const (
	deniedToken = "denied"
	deniedUser  = "denied"
)

// authenticator: the denied token is the denied user; any other request,
// whatever it carries, is system:anonymous.
func newAuthenticator() authenticator.Request {
	denied := authenticator.TokenFunc(func(ctx context.Context, token string) (*authenticator.Response, bool, error) {
		if token != deniedToken {
			return nil, false, nil
		}
		return &authenticator.Response{User: &user.DefaultInfo{Name: deniedUser}}, true, nil
	})
	return union.New(bearertoken.New(denied), anonymous.NewAuthenticator(nil))
}

// authorizer allows everything but the denied user.
func newAuthorizer() authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if a.GetUser() != nil && a.GetUser().GetName() == deniedUser {
			return authorizer.DecisionDeny, "the test server denies this user everything", nil
		}
		return authorizer.DecisionAllow, "", nil
	})
}
