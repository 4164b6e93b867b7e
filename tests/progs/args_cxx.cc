// A C++ program for fxt-run --args/--retval (tests/e2e/args.sh): a
// method (its `this`), a reference, a method of a class template, a
// function that throws through a patched frame.  Built -O2 -g without
// -finstrument-functions.  Prints "done", exits 0.
#include <cstdio>
#include <stdexcept>

#define KEEP __attribute__((noinline, noipa))

namespace shop {

struct Cart {
	long total = 0;
	KEEP long add(int qty, double price);
	KEEP bool empty() const;
};

long Cart::add(int qty, double price)
{
	total += (long)(qty * price);
	return total;
}

bool Cart::empty() const
{
	return total == 0;
}

KEEP int count(const Cart &c, const char *label);
int count(const Cart &c, const char *label)
{
	return (int)c.total + (label[0] == 'x');
}

KEEP int fail(int code);
int fail(int code)
{
	if (code)
		throw std::runtime_error("fail");
	return 0;
}

} // namespace shop

int main()
{
	shop::Cart cart;
	cart.add(3, 2.5);
	cart.empty();
	shop::count(cart, "items");
	try {
		shop::fail(7);
	} catch (const std::exception &) {
	}
	shop::fail(0);
	std::puts("done");
	return 0;
}
