// patchme_cxx: C++ exceptions through patched functions (fxt-run --patch,
// tests/e2e/patch.sh), built without -finstrument-functions (-O2).  The
// unwinder reads return addresses, which patching replaces: each throw
// here crosses patched frames, is caught in a patched frame, and the calls
// after it must still nest and return.
//
//   thrower(d)   recurses d deep, then throws at the bottom
//   catcher(i)   calls thrower(10) in a try, catches, then calls leaf()
//   cleanup(d)   has a destructor run by the unwinding (a landing pad that
//                resumes), d deep, under catcher_cleanup()
//   rethrower()  catches and rethrows to catcher_rethrow()
//   exiter(d)    d deep, each frame with a destructor, then pthread_exit()
//                on a thread of its own: the destructors run
// main runs 100 of each and prints the sums, as the plain build does.
// `patchme_cxx loop S` throws through catcher() for S seconds, then says
// "loop ok": a process to attach to (fxt-run -p) while it throws.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <pthread.h>
#include <stdexcept>

#define NOINLINE __attribute__((noinline, noclone))

static volatile long sink;

NOINLINE void leaf(long v)
{
	sink += v;
}

NOINLINE void thrower(int d)
{
	if (d == 0)
		throw std::runtime_error("bottom");
	thrower(d - 1);
	sink++;
}

NOINLINE long catcher(int i)
{
	try {
		thrower(10);
	} catch (const std::exception &e) {
		leaf(i);
		return 1;
	}
	return 0;
}

struct Guard {
	~Guard()
	{
		leaf(1);
	}
};

NOINLINE void cleanup(int d)
{
	Guard g;
	if (d == 0)
		throw 42;
	cleanup(d - 1);
	sink++;
}

NOINLINE long catcher_cleanup()
{
	try {
		cleanup(5);
	} catch (int v) {
		return v;
	}
	return 0;
}

NOINLINE void rethrower()
{
	try {
		thrower(3);
	} catch (...) {
		leaf(2);
		throw;
	}
}

NOINLINE long catcher_rethrow()
{
	try {
		rethrower();
	} catch (const std::runtime_error &) {
		return 1;
	}
	return 0;
}

// A thread ends in pthread_exit() 4 patched frames deep, each with a
// destructor that prints: the C library's forced unwinding runs them all.
struct DepthPrinter {
	int depth;
	~DepthPrinter()
	{
		std::printf("destructor %d\n", depth);
	}
};

NOINLINE void exiter(int d)
{
	DepthPrinter g{ d };
	if (d == 0) {
		if (sink >= 0) // always; a way out gcc can see
			pthread_exit(reinterpret_cast<void *>(42L));
		return;
	}
	exiter(d - 1);
	sink++; // not a tail call
}

NOINLINE void *exiting_thread(void *)
{
	exiter(3);
	return nullptr;
}

int main(int argc, char **argv)
{
	long a = 0, b = 0, c = 0;
	if (argc == 3 && std::strcmp(argv[1], "loop") == 0) {
		time_t end = time(nullptr) + std::atol(argv[2]);
		while (time(nullptr) < end)
			a += catcher(1);
		std::printf("loop ok\n");
		return 0;
	}
	for (int i = 0; i < 100; i++) {
		a += catcher(i);
		b += catcher_cleanup();
		c += catcher_rethrow();
	}
	std::printf("caught %ld, %ld, %ld; sink %ld\n", a, b, c, (long)sink);
	pthread_t t;
	void *ret = nullptr;
	if (pthread_create(&t, nullptr, exiting_thread, nullptr) == 0 && pthread_join(t, &ret) == 0)
		std::printf("pthread_exit: %ld\n", reinterpret_cast<long>(ret));
	return 0;
}
