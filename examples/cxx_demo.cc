// cxx_demo: C++ names for the symbolizer and unwinding for the hooks.
//
// It has a namespace, a class template (demo::Stack<int> and
// demo::Stack<double>), overloads (demo::area(int, int) and
// demo::area(double)), a lambda, and an exception thrown two frames
// below the frame that catches it: the exit hooks of the frames it unwinds
// through must still run, so the trace stays nested.  It is built with
// -finstrument-functions-exclude-file-list=/usr/include so that only this
// file's functions are traced, and the counts below are exact:
//
//   main                                  1
//   demo::run()                           1
//   demo::Stack<int>::push(int)           5
//   demo::Stack<int>::pop()               5
//   demo::Stack<double>::push(double)     2
//   demo::Stack<double>::pop()            2
//   demo::area(int, int)                  2
//   demo::area(double)                    1
//   demo::checked_div(int, int)           4   (one throws)
//   demo::divide_all(int)                 4
//   demo::guarded(int)                    4   (catches the exception)
//   demo::apply<...>(...)                 1
//   the lambda's operator()               3
#include <cstdio>
#include <stdexcept>

#include "examples/example.h"

namespace demo
{

template <typename T> class Stack
{
      public:
	EXAMPLE_NOINLINE void push(T v)
	{
		items_[n_++] = v;
	}
	EXAMPLE_NOINLINE T pop()
	{
		return items_[--n_];
	}

      private:
	T items_[16] = {};
	int n_ = 0;
};

EXAMPLE_NOINLINE int area(int w, int h)
{
	return w * h;
}

EXAMPLE_NOINLINE double area(double r)
{
	return 3.0 * r * r;
}

EXAMPLE_NOINLINE int checked_div(int a, int b)
{
	if (b == 0)
		throw std::domain_error("division by zero");
	return a / b;
}

EXAMPLE_NOINLINE int divide_all(int b)
{
	return checked_div(100, b);
}

// Catches what checked_div throws two frames further down.
EXAMPLE_NOINLINE int guarded(int b)
{
	try {
		return divide_all(b);
	} catch (const std::domain_error &) {
		return -1;
	}
}

template <typename F> EXAMPLE_NOINLINE int apply(F f, int n)
{
	int sum = 0;
	for (int i = 0; i < n; i++)
		sum += f(i);
	return sum;
}

EXAMPLE_NOINLINE int run()
{
	Stack<int> si;
	for (int i = 0; i < 5; i++)
		si.push(i);
	int total = 0;
	for (int i = 0; i < 5; i++)
		total += si.pop();

	Stack<double> sd;
	sd.push(1.5);
	sd.push(2.5);
	double dt = sd.pop() + sd.pop();

	// One call a statement: the order of first calls is part of the
	// expected tree.
	total += area(2, 3);
	total += area(4, 5);
	total += static_cast<int>(area(dt));

	// b = 2, 1, 0 (throws), 5
	const int divisors[] = { 2, 1, 0, 5 };
	for (int b : divisors)
		total += guarded(b);

	int scale = 7;
	total += apply([scale](int x) EXAMPLE_NOINLINE { return x * scale; }, 3);
	return total;
}

} // namespace demo

int main()
{
	std::printf("cxx_demo: total=%d\n", demo::run());
	return 0;
}
