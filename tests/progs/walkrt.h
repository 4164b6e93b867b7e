/* libwalkrt (walkrt.c): a library that walks its own stack. */
#ifndef WALKRT_H
#define WALKRT_H

/* Calls itself d deep (d >= 3), then walks 4 frames: 4, or aborts. */
int rt_run(int d);

/* The walker, named as HotSpot's. */
int AsyncGetCallTrace(int depth);

#endif
