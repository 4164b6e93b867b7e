/* A fixture of the signature test (tests/unit/test_signature.c): C++
 * methods (this), references, a class that is not trivially copyable (so
 * passed and returned through an invisible reference), a pointer to a
 * member function.  Never run by the test: only loaded into a symbolizer. */
#include <cstdio>

namespace sigfix
{

struct Acc {
	long total;
	int add(int x, double w);
};

int Acc::add(int x, double w)
{
	total += x;
	return static_cast<int>(total + static_cast<long>(w));
}

// Copying it runs code: the ABI passes it through a reference.
struct Counted {
	int v;
	explicit Counted(int x) : v(x)
	{
	}
	Counted(const Counted &o);
};

Counted::Counted(const Counted &o) : v(o.v + 1)
{
}

int by_value(Counted c, int k)
{
	return c.v + k;
}

Counted make_counted(int v)
{
	return Counted(v);
}

// Trivially copyable despite its constructor: in registers.
struct Plain {
	int a;
	explicit Plain(int x) : a(x)
	{
	}
	Plain(const Plain &) = default;
};

// Not trivially copyable: a virtual function; a member that is not.
struct Poly {
	int x;
	virtual int get() const
	{
		return x;
	}
};

struct Holder {
	Counted c;
	long n;
};

long by_kind(Plain p, Poly q, Holder h, long n)
{
	return p.a + q.get() + h.c.v + h.n + n;
}

// An empty class takes no register; nullptr_t takes one.
struct Empty {
};

int by_nothing(Empty e, decltype(nullptr) n, int x)
{
	(void)e;
	return x + (n == nullptr);
}

long by_ref(const Acc &a, Acc &&b)
{
	return a.total + b.total;
}

int call_member(int (Acc::*f)(int, double), Acc *a)
{
	return (a->*f)(1, 2.0);
}

} // namespace sigfix

int main(int argc, char **argv)
{
	sigfix::Acc a{ argc }, b{ 2 };
	sigfix::Counted c(argc);

	(void)argv;
	sigfix::Poly poly{};
	sigfix::Holder h{ sigfix::Counted(1), 2 };

	std::printf("%ld %d\n", sigfix::by_kind(sigfix::Plain(argc), poly, h, 4),
		    sigfix::by_nothing(sigfix::Empty{}, nullptr, argc));
	std::printf("%d %d %d %ld %d\n", a.add(1, 2.0), sigfix::by_value(c, 3),
		    sigfix::make_counted(4).v, sigfix::by_ref(a, static_cast<sigfix::Acc &&>(b)),
		    sigfix::call_member(&sigfix::Acc::add, &a));
	return 0;
}
