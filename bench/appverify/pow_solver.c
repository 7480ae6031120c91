/* A native proof-of-work solver, as an attacker would run one: how many of Gatehouse's default
   challenges (ALTCHA v1: find n <= maxnumber with SHA-256(salt + n) == challenge) one core
   solves per second. Build and run: bench/appverify/pow_native.sh [maxnumber] [seconds].
   Each round draws a secret number uniformly in 0...maxnumber, as the server does, and searches
   from 0 as the widget does; the salt has the server's shape (hex nonce + "?expires=…"). */
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    long maxnumber = argc > 1 ? atol(argv[1]) : 50000;
    double seconds = argc > 2 ? atof(argv[2]) : 10;
    const char *salt = "5f1c0e9a7b3d2c4e6f8a0b1c?expires=1767225900&scope=0123456789abcdef&";
    size_t saltlen = strlen(salt);
    char buf[160];
    memcpy(buf, salt, saltlen);
    unsigned char target[32], digest[32];
    long solved = 0, hashes = 0;
    unsigned long long seed = 88172645463325252ULL;
    double start = now();
    while (now() - start < seconds) {
        seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
        long secret = (long)(seed % (unsigned long long)(maxnumber + 1));
        int len = snprintf(buf + saltlen, sizeof buf - saltlen, "%ld", secret);
        SHA256((unsigned char *)buf, saltlen + len, target);
        for (long n = 0; n <= maxnumber; n++) {
            len = snprintf(buf + saltlen, sizeof buf - saltlen, "%ld", n);
            SHA256((unsigned char *)buf, saltlen + len, digest);
            hashes++;
            if (memcmp(digest, target, 32) == 0) { solved++; break; }
        }
    }
    double elapsed = now() - start;
    printf("{\"maxnumber\": %ld, \"seconds\": %.1f, \"solutions\": %ld, \"solutions_per_s\": %.1f, \"hashes_per_s\": %.0f}\n",
           maxnumber, elapsed, solved, solved / elapsed, hashes / elapsed);
    return 0;
}
