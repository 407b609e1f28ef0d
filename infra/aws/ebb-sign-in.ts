import { Duration, Names, Stack } from "aws-cdk-lib";
import type * as apigw from "aws-cdk-lib/aws-apigateway";
import * as cognito from "aws-cdk-lib/aws-cognito";
import { IdentityPool, UserPoolAuthenticationProvider } from "aws-cdk-lib/aws-cognito-identitypool";
import * as iam from "aws-cdk-lib/aws-iam";
import { Construct } from "constructs";

export interface EbbSignInProps {
  /** The web UI's URL (`https://<distribution domain>`): where the hosted sign-in returns. */
  readonly appUrl: string;
  /** The IAM-authorized API that signed-in users may call. */
  readonly api: apigw.RestApi;
  /** The hosted sign-in's domain prefix (`<prefix>.auth.<region>.amazoncognito.com`); unique per region. */
  readonly domainPrefix?: string;
}

/**
 * Who may use the web UI on AWS: a Cognito user pool (no self sign-up: an administrator creates
 * each user, e.g. `aws cognito-idp admin-create-user`), its hosted sign-in with the authorization code
 * grant and PKCE for the app (a public client, no secret), and an identity pool whose authenticated
 * role may only invoke the API. The app trades the ID token for that role's short-lived credentials
 * and signs every API call with them (ui/src/api/cognito-sign-in.ts): the API keeps one auth, IAM.
 */
export class EbbSignIn extends Construct {
  readonly userPool: cognito.UserPool;
  readonly client: cognito.UserPoolClient;
  readonly domain: cognito.UserPoolDomain;
  readonly identityPool: IdentityPool;

  constructor(scope: Construct, id: string, props: EbbSignInProps) {
    super(scope, id);
    this.userPool = new cognito.UserPool(this, "Users", {
      selfSignUpEnabled: false,
      signInAliases: { email: true },
      autoVerify: { email: true },
      mfa: cognito.Mfa.OPTIONAL,
      mfaSecondFactor: { otp: true, sms: false },
      passwordPolicy: { minLength: 12, requireSymbols: false },
      accountRecovery: cognito.AccountRecovery.EMAIL_ONLY,
    });
    this.domain = this.userPool.addDomain("HostedSignIn", {
      cognitoDomain: {
        // A region-wide namespace: the account and a hash of this construct's path keep it unique.
        domainPrefix:
          props.domainPrefix ??
          `ebb-${Stack.of(this).account}-${Names.uniqueId(this).slice(-8).toLowerCase()}`,
      },
    });
    const callback = `${props.appUrl}/`;
    this.client = this.userPool.addClient("WebUi", {
      generateSecret: false,
      authFlows: {},
      oAuth: {
        flows: { authorizationCodeGrant: true },
        scopes: [cognito.OAuthScope.OPENID, cognito.OAuthScope.EMAIL, cognito.OAuthScope.PROFILE],
        callbackUrls: [callback],
        logoutUrls: [callback],
      },
      supportedIdentityProviders: [cognito.UserPoolClientIdentityProvider.COGNITO],
      preventUserExistenceErrors: true,
      idTokenValidity: Duration.hours(1),
      accessTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.hours(12),
    });
    this.identityPool = new IdentityPool(this, "Identities", {
      allowUnauthenticatedIdentities: false,
      authenticationProviders: {
        userPools: [
          new UserPoolAuthenticationProvider({ userPool: this.userPool, userPoolClient: this.client }),
        ],
      },
    });
    this.identityPool.authenticatedRole.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ["execute-api:Invoke"], resources: [props.api.arnForExecuteApi()] }),
    );
  }

  /** What the app reads from `config.json` to sign in (ui/src/api/app-config.ts). */
  appConfig(): Record<string, string> {
    const region = Stack.of(this).region;
    return {
      kind: "cognito",
      region,
      domain: this.domain.baseUrl(),
      userPoolClientId: this.client.userPoolClientId,
      userPoolProvider: this.userPool.userPoolProviderName,
      identityPoolId: this.identityPool.identityPoolId,
    };
  }
}
