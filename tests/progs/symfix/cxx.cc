// C++ fixture of the symbolizer test: names that need demangling.  Every
// function body differs, so that no optimisation folds two into one address.
#include <cstring>

#include "tests/progs/symfix/symfix.h"

namespace fxsym
{
namespace inner
{
template <typename T> class Box
{
      public:
	explicit Box(T v) : v_(v)
	{
	}
	T get(T add) const;

      private:
	T v_;
};

template <typename T> T Box<T>::get(T add) const
{
	return v_ * 3 + add;
}

template class Box<int>;
template class Box<long>;
} // namespace inner

int over(int x)
{
	return x + 11;
}

int over(double x)
{
	return static_cast<int>(x * 5.0);
}

int over(const char *s)
{
	return static_cast<int>(std::strlen(s)) - 7;
}

template <typename T> T twice(T x)
{
	return x + x;
}
template long twice<long>(long);

// The address of a non-virtual member function: in the Itanium C++ ABI a
// pointer to member function is {function address, this adjustment}.
template <typename P> static uintptr_t pmf_address(P pmf)
{
	uintptr_t words[2];

	static_assert(sizeof(pmf) == sizeof(words), "Itanium ABI member pointer");
	std::memcpy(words, &pmf, sizeof(words));
	return words[0];
}

// Inline, so that the lambda gets the mangled name the ABI prescribes
// (clang names a lambda in a non-inline function "$_0").
inline int with_lambda(int x, uintptr_t *addr)
{
	auto add = [x](int y) { return x * y + 13; };

	*addr = pmf_address(&decltype(add)::operator());
	return add(x);
}
} // namespace fxsym

// Internal linkage: only .symtab (or separate debuginfo) names it.
static int hidden_helper(int x)
{
	return x ^ 0x5a5a;
}

extern "C" int fxsym_plain_c(int x)
{
	return hidden_helper(x) - 1;
}

extern "C" size_t fxsym_cxx_addrs(uintptr_t out[FXSYM_COUNT])
{
	int (*over_int)(int) = fxsym::over;
	int (*over_double)(double) = fxsym::over;
	int (*over_str)(const char *) = fxsym::over;
	int (*helper)(int) = hidden_helper;

	out[FXSYM_BOX_GET] = fxsym::pmf_address(&fxsym::inner::Box<int>::get);
	out[FXSYM_BOX_GET_LONG] = fxsym::pmf_address(&fxsym::inner::Box<long>::get);
	out[FXSYM_OVER_INT] = reinterpret_cast<uintptr_t>(over_int);
	out[FXSYM_OVER_DOUBLE] = reinterpret_cast<uintptr_t>(over_double);
	out[FXSYM_OVER_STR] = reinterpret_cast<uintptr_t>(over_str);
	out[FXSYM_TWICE] = reinterpret_cast<uintptr_t>(&fxsym::twice<long>);
	fxsym::with_lambda(2, &out[FXSYM_LAMBDA]);
	out[FXSYM_STATIC] = reinterpret_cast<uintptr_t>(helper);
	out[FXSYM_C] = reinterpret_cast<uintptr_t>(&fxsym_plain_c);
	return FXSYM_COUNT;
}
