/* A program that uses OpenSSL and tears it down with OPENSSL_cleanup()
 * before it returns from main, as curl does: the agent's exit-time work
 * (tests/e2e/agent-no-debuginfod.sh) then runs in a process whose OpenSSL is
 * gone, and must not start it again (libdebuginfod's libcurl would: a
 * crash).  Prints the SHA-256 of "fxtrace", then "ssl_cleanup: done";
 * exits 0, or 1 when OpenSSL fails.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

static int sha256_hex(const char *text, char *hex, size_t size)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
		 EVP_DigestUpdate(ctx, text, strlen(text)) == 1 &&
		 EVP_DigestFinal_ex(ctx, md, &len) == 1 && size > 2 * (size_t)len;

	EVP_MD_CTX_free(ctx);
	if (!ok)
		return -1;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return 0;
}

int main(void)
{
	char hex[2 * EVP_MAX_MD_SIZE + 1];
	SSL_CTX *ctx;

	if (sha256_hex("fxtrace", hex, sizeof(hex)) < 0) {
		fprintf(stderr, "ssl_cleanup: SHA-256 failed\n");
		return 1;
	}
	/* The TLS side too: what a client sets up before it connects. */
	ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx) {
		fprintf(stderr, "ssl_cleanup: SSL_CTX_new failed\n");
		return 1;
	}
	SSL_CTX_free(ctx);
	printf("sha256(fxtrace)=%s\n", hex);
	printf("ssl_cleanup: done\n");
	fflush(stdout);
	OPENSSL_cleanup();
	return 0;
}
