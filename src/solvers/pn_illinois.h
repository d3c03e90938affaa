/* pn_illinois.h: the root of an event indicator on a step, by the Illinois
   variant of regula falsi. The one root finder of paynter's event location:
   the solvers' (src/solvers/event_locator.cc) and the runtime's of every
   exported FMU (src/fmi/runtime/fmu.c; the build embeds this file into the
   FMU's sources/). Plain C99, header only; C++ includes it as well. */
#ifndef PN_ILLINOIS_H
#define PN_ILLINOIS_H

#include <math.h>

/* The width of the bracket at which a crossing in [t0, t1] counts as located:
   4 units of rounding of t, or of the step when that is longer. */
static double pn_illinois_tolerance(double t0, double t1) {
  const double eps = 2.220446049250313e-16, span = t1 - t0;
  const double a = fabs(t0) > fabs(t1) ? fabs(t0) : fabs(t1);
  return 4 * eps * (a > span ? a : span);
}

/* The time at which an indicator g changes sign in (t0, t1]: g(t0) = g0 on the
   old side (zero when the indicator sits on zero; old_sign is then its side, 0
   when it has none), g(t1) = g1 nonzero on the new side. [a, b] keeps the sign
   change: its next point is where the chord through (a, g(a)) and (b, g(b))
   crosses zero (halfway when that falls outside), and the value kept at an end
   that is kept twice in a row is halved (Illinois), until b - a <= tol or g is
   zero at a point, at most 200 times. *root is the bracket's right end, where
   the sign has changed. g(ctx, t, &value) evaluates the indicator on the
   step's interpolant and returns nonzero to stop; pn_illinois then returns
   that value (0 when done). */
static int pn_illinois(double t0, double t1, double g0, double g1, int old_sign, double tol,
                       int (*g)(void* ctx, double t, double* value), void* ctx, double* root) {
  double a = t0, b = t1, ga = g0, gb = g1;
  const int s1 = (g1 > 0) - (g1 < 0);
  int it, side = 0;
  if (ga == 0) ga = old_sign * 2.2250738585072014e-308; /* the smallest normal double */
  for (it = 0; it < 200 && b - a > tol; ++it) {
    double c = b - gb * (b - a) / (gb - ga), gc = 0;
    int stop;
    if (!(c > a && c < b)) c = 0.5 * (a + b);
    stop = g(ctx, c, &gc);
    if (stop) return stop;
    if (gc == 0 || (gc > 0) - (gc < 0) == s1) {
      b = c;
      gb = gc;
      if (gc == 0) break;
      if (side == 1) ga *= 0.5; /* Illinois: halve the value kept at the other end */
      side = 1;
    } else {
      a = c;
      ga = gc;
      if (side == -1) gb *= 0.5;
      side = -1;
    }
  }
  *root = b;
  return 0;
}

#endif /* PN_ILLINOIS_H */
