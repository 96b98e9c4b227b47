/* Hand-written C + GSL yardstick for holosim: an N-link planar chain of point
 * masses in Cartesian form, integrated the way holosim integrates it.
 *
 *   q = (x1, y1, ..., xN, yN), unit masses, g = 9.81, links of length l = 1,
 *   G_1 = x1^2 + y1^2 - l^2,  G_i = (x_i - x_{i-1})^2 + (y_i - y_{i-1})^2 - l^2
 *   C = G_q M^-1 G_q^T (tridiagonal), Lambda = -C^-1 (G_q M^-1 Q + gamma),
 *   a = M^-1 (Q + G_q^T Lambda),  gamma_i = 2 |v_i - v_{i-1}|^2
 *
 * C is factored dense (gsl_linalg_cholesky_decomp1 on the k x k matrix, the
 * default) or banded (-b: gsl_linalg_cholesky_band_decomp, GSL >= 2.6).
 * gsl_odeiv2 rk8pd, rtol = atol = 1e-10, gsl_odeiv2_evolve_apply with
 * t1 = the next output time (as src/integrate/integrate.c).  Rows t, q, v
 * with printf("%.17g").  Initial data: the straight chain at angle th = 1
 * rad from the downward vertical, at rest (bench/chain_model.sh writes the
 * same model for holosim).
 *
 *   baseline_chain -n N [-b|-t] [-a TH0] [-T t_end] [-d dt] [-o FILE] [-p] [-w] [-r]
 *     -a  the initial angle from the downward vertical (default 1; 1.5707963267948966:
 *         released horizontally)
 *     -b  banded Cholesky (default dense)   -p  projection after every step
 *     -t  the tridiagonal Cholesky written out inline (no GSL call)
 *     -w  work integrals in the state (2n+2, as holosim)
 *     -r  time the right-hand side alone (ns per evaluation) and exit
 * Before anything else the dense and banded accelerations are compared at a
 * moving state; the program exits 2 if they differ by more than 1e-10. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_odeiv2.h>

static const double g = 9.81, len = 1.0;
static double th0 = 1.0;            /* -a: the initial angle */

typedef struct {
    size_t N;           /* links = masses = constraints (k); n = 2N */
    int banded, with_work;
    double *mi;         /* [N] inverse masses */
    double *d, *w;      /* [2N] link vectors p_i - p_{i-1}, v_i - v_{i-1} */
    double *z;          /* [2N] M^-1 Q */
    double *Lambda;     /* [N] */
    gsl_matrix *C;      /* N x N (dense) or N x 2 (banded, lower) */
    gsl_vector *r;      /* [N] */
    long nrhs;
} chain;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* d_i = p_i - p_{i-1} (p_0 = origin) for the positions x (interleaved x, y) */
static void diffs(size_t N, const double *x, double *d)
{
    d[0] = x[0];
    d[1] = x[1];
    for (size_t i = 1; i < N; i++) {
        d[2 * i] = x[2 * i] - x[2 * i - 2];
        d[2 * i + 1] = x[2 * i + 1] - x[2 * i - 1];
    }
}

/* C = G_q M^-1 G_q^T: row i of G_q is 2 d_i on p_i and -2 d_i on p_{i-1},
 * so C_ii = 4 |d_i|^2 (mi_i + mi_{i-1}), C_{i,i-1} = -4 d_i.d_{i-1} mi_{i-1}.
 * Stored dense (zeroed, lower and upper set) or lower banded (N x 2). */
static int factor_C(chain *c)
{
    size_t N = c->N;
    const double *d = c->d, *mi = c->mi;
    gsl_matrix *C = c->C;
    if (!c->banded)
        memset(C->data, 0, N * C->tda * sizeof *C->data);
    for (size_t i = 0; i < N; i++) {
        double dd = d[2 * i] * d[2 * i] + d[2 * i + 1] * d[2 * i + 1];
        double cii = 4 * dd * (mi[i] + (i ? mi[i - 1] : 0));
        if (c->banded) {
            C->data[i * C->tda] = cii;
            if (i + 1 < N) {
                double dn = d[2 * i + 2] * d[2 * i] + d[2 * i + 3] * d[2 * i + 1];
                C->data[i * C->tda + 1] = -4 * dn * mi[i];       /* C_{i+1,i} */
            } else {
                C->data[i * C->tda + 1] = 0;
            }
        } else {
            C->data[i * C->tda + i] = cii;
            if (i > 0) {
                double dp = d[2 * i] * d[2 * i - 2] + d[2 * i + 1] * d[2 * i - 1];
                C->data[i * C->tda + i - 1] = C->data[(i - 1) * C->tda + i] = -4 * dp * mi[i - 1];
            }
        }
    }
    if (c->banded == 2) {                 /* -t: the tridiagonal Cholesky inline */
        double *L = C->data, prev = 0;
        for (size_t i = 0; i < N; i++) {
            double dd = L[i * C->tda] - prev * prev;
            if (!(dd > 0))
                return GSL_EDOM;
            double l = sqrt(dd);
            L[i * C->tda] = l;
            prev = i + 1 < N ? (L[i * C->tda + 1] /= l) : 0;
        }
        return GSL_SUCCESS;
    }
    return c->banded ? gsl_linalg_cholesky_band_decomp(C) : gsl_linalg_cholesky_decomp1(C);
}

static void solve_C(chain *c)
{
    if (c->banded == 2) {
        size_t N = c->N, tda = c->C->tda;
        const double *L = c->C->data;
        double *x = c->r->data;
        for (size_t i = 0; i < N; i++)
            x[i] = (i ? x[i] - L[(i - 1) * tda + 1] * x[i - 1] : x[i]) / L[i * tda];
        for (size_t i = N; i-- > 0;)
            x[i] = (i + 1 < N ? x[i] - L[i * tda + 1] * x[i + 1] : x[i]) / L[i * tda];
        return;
    }
    if (c->banded)
        gsl_linalg_cholesky_band_svx(c->C, c->r);
    else
        gsl_linalg_cholesky_svx(c->C, c->r);
}

/* out_j = mi_j (2 d_j mu_j - 2 d_{j+1} mu_{j+1})  (= M^-1 G_q^T mu) */
static void gqt_times(const chain *c, const double *mu, double *out)
{
    size_t N = c->N;
    const double *d = c->d;
    for (size_t j = 0; j < N; j++) {
        double ox = 2 * d[2 * j] * mu[j], oy = 2 * d[2 * j + 1] * mu[j];
        if (j + 1 < N) {
            ox -= 2 * d[2 * j + 2] * mu[j + 1];
            oy -= 2 * d[2 * j + 3] * mu[j + 1];
        }
        out[2 * j] = c->mi[j] * ox;
        out[2 * j + 1] = c->mi[j] * oy;
    }
}

static int accel(chain *c, const double *q, const double *v, double *a)
{
    size_t N = c->N;
    c->nrhs++;
    diffs(N, q, c->d);
    diffs(N, v, c->w);
    double *r = c->r->data;
    const double *d = c->d, *w = c->w, *z = c->z;
    for (size_t i = 0; i < N; i++) {       /* G_q M^-1 Q + gamma */
        double zx = z[2 * i] - (i ? z[2 * i - 2] : 0);
        double zy = z[2 * i + 1] - (i ? z[2 * i - 1] : 0);
        r[i] = 2 * (d[2 * i] * zx + d[2 * i + 1] * zy) +
               2 * (w[2 * i] * w[2 * i] + w[2 * i + 1] * w[2 * i + 1]);
    }
    if (factor_C(c) != GSL_SUCCESS)
        return GSL_EBADFUNC;
    solve_C(c);
    for (size_t i = 0; i < N; i++)
        c->Lambda[i] = -r[i];
    gqt_times(c, c->Lambda, a);
    for (size_t j = 0; j < 2 * N; j++)
        a[j] += z[j];
    return GSL_SUCCESS;
}

static int rhs(double t, const double y[], double f[], void *params)
{
    (void)t;
    chain *c = params;
    size_t n = 2 * c->N;
    const double *q = y, *v = y + n;
    memcpy(f, v, n * sizeof *f);
    if (accel(c, q, v, f + n) != GSL_SUCCESS)
        return GSL_EBADFUNC;
    if (c->with_work) {                    /* R.v = Lambda . G_q v, P_nc = 0 */
        double pr = 0;
        for (size_t i = 0; i < c->N; i++)
            pr += c->Lambda[i] * 2 * (c->d[2 * i] * c->w[2 * i] +
                                      c->d[2 * i + 1] * c->w[2 * i + 1]);
        f[2 * n] = pr;
        f[2 * n + 1] = 0;
    }
    return GSL_SUCCESS;
}

static double gnorm(const chain *c, const double *q, double *G, double *mx)
{
    size_t N = c->N;
    double s = 0, m = 0, px = 0, py = 0;
    for (size_t i = 0; i < N; i++) {
        double dx = q[2 * i] - px, dy = q[2 * i + 1] - py;
        G[i] = dx * dx + dy * dy - len * len;
        s += G[i] * G[i];
        m = fmax(m, fabs(G[i]));
        px = q[2 * i];
        py = q[2 * i + 1];
    }
    *mx = m;
    return sqrt(s);
}

/* holosim's projection stabilization (see baseline_dp.c), with C factored
 * the same way as in the right-hand side. */
static int project(chain *c, double *q, double *v, double *scratch)
{
    size_t N = c->N, n = 2 * N;
    double *G = scratch, *Gn = G + N, *dq = Gn + N, *qt = dq + n, mx, mxn;
    double g0 = gnorm(c, q, G, &mx);
    for (int it = 0; it < 100 && (mx > 1e-12 || (it < 1 && mx > 0)); it++) {
        diffs(N, q, c->d);
        if (factor_C(c) != GSL_SUCCESS)
            return -1;
        memcpy(c->r->data, G, N * sizeof *G);
        solve_C(c);
        gqt_times(c, c->r->data, dq);
        double alpha = 1, gn = 0;
        int ok = 0;
        for (int h = 0; h < 30; h++, alpha *= 0.5) {
            for (size_t j = 0; j < n; j++)
                qt[j] = q[j] - alpha * dq[j];
            gn = gnorm(c, qt, Gn, &mxn);
            if (gn < (1 - 1e-4 * alpha) * g0 || gn == 0) {
                ok = 1;
                break;
            }
        }
        if (!ok)
            break;
        memcpy(q, qt, n * sizeof *q);
        memcpy(G, Gn, N * sizeof *G);
        g0 = gn;
        mx = mxn;
    }
    diffs(N, q, c->d);
    diffs(N, v, c->w);
    if (factor_C(c) != GSL_SUCCESS)
        return -1;
    for (size_t i = 0; i < N; i++)
        c->r->data[i] = 2 * (c->d[2 * i] * c->w[2 * i] + c->d[2 * i + 1] * c->w[2 * i + 1]);
    solve_C(c);
    gqt_times(c, c->r->data, dq);
    for (size_t j = 0; j < n; j++)
        v[j] -= dq[j];
    return 0;
}

static void chain_init(chain *c, size_t N, int banded, int with_work)
{
    memset(c, 0, sizeof *c);
    c->N = N;
    c->banded = banded;
    c->with_work = with_work;
    c->mi = malloc(N * sizeof *c->mi);
    c->d = malloc(2 * N * sizeof *c->d);
    c->w = malloc(2 * N * sizeof *c->w);
    c->z = malloc(2 * N * sizeof *c->z);
    c->Lambda = malloc(N * sizeof *c->Lambda);
    c->C = banded ? gsl_matrix_alloc(N, 2) : gsl_matrix_alloc(N, N);
    c->r = gsl_vector_alloc(N);
    for (size_t i = 0; i < N; i++) {
        c->mi[i] = 1.0;                  /* unit masses */
        c->z[2 * i] = 0;
        c->z[2 * i + 1] = -g;           /* M^-1 Q */
    }
}

static void chain_free(chain *c)
{
    free(c->mi);
    free(c->d);
    free(c->w);
    free(c->z);
    free(c->Lambda);
    gsl_matrix_free(c->C);
    gsl_vector_free(c->r);
}

static void initial(size_t N, double *y)
{
    for (size_t i = 0; i < N; i++) {
        y[2 * i] = (double)(i + 1) * len * sin(th0);
        y[2 * i + 1] = -(double)(i + 1) * len * cos(th0);
    }
}

/* A moving test state: positions on the manifold, velocities tangent to it
 * (each link turning at its own rate). */
static void test_state(size_t N, double *y)
{
    double px = 0, py = 0, vx = 0, vy = 0;
    for (size_t i = 0; i < N; i++) {
        double th = 0.3 + 0.7 * sin(1.0 + (double)i), om = cos(2.0 * (double)i);
        px += len * sin(th);
        py -= len * cos(th);
        vx += len * cos(th) * om;
        vy += len * sin(th) * om;
        y[2 * i] = px;
        y[2 * i + 1] = py;
        y[2 * N + 2 * i] = vx;
        y[2 * N + 2 * i + 1] = vy;
    }
}

static int self_check(size_t N)
{
    chain cd, cb, ct;
    chain_init(&cd, N, 0, 0);
    chain_init(&cb, N, 1, 0);
    chain_init(&ct, N, 2, 0);
    double *y = calloc(4 * N, sizeof *y), *fd = calloc(4 * N, sizeof *fd),
           *fb = calloc(4 * N, sizeof *fb), *ft = calloc(4 * N, sizeof *ft);
    test_state(N, y);
    rhs(0, y, fd, &cd);
    rhs(0, y, fb, &cb);
    rhs(0, y, ft, &ct);
    double e = 0, s = 0;
    for (size_t j = 2 * N; j < 4 * N; j++) {
        e = fmax(e, fmax(fabs(fd[j] - fb[j]), fabs(fd[j] - ft[j])));
        s = fmax(s, fabs(fd[j]));
    }
    chain_free(&cd);
    chain_free(&cb);
    chain_free(&ct);
    free(y);
    free(fd);
    free(fb);
    free(ft);
    if (!(e <= 1e-10 * fmax(1, s))) {
        fprintf(stderr, "baseline_chain: dense and banded accelerations differ by %g\n", e);
        return 2;
    }
    return 0;
}

static int time_rhs(chain *c)
{
    size_t N = c->N, dim = 4 * N + 2;
    double *y = calloc(dim, sizeof *y), *f = calloc(dim, sizeof *f);
    test_state(N, y);
    long reps = (long)(2e7 / (double)(N * (c->banded ? 1 : N / 8 + 1))) + 10;
    double best = INFINITY, sink = 0;
    for (int r = 0; r < 7; r++) {
        double t0 = now();
        for (long i = 0; i < reps; i++) {
            rhs(0, y, f, c);
            sink += f[2 * N];
        }
        best = fmin(best, (now() - t0) / (double)reps);
    }
    printf("rhs_ns %.1f N %zu %s (min of 7 x %ld)%s\n", best * 1e9, N,
           c->banded ? "banded" : "dense", reps, isfinite(sink) ? "" : " !");
    free(y);
    free(f);
    return 0;
}

static void row(FILE *f, double t, const double *y, size_t n)
{
    fprintf(f, "%.17g", t);
    for (size_t i = 0; i < 2 * n; i++)
        fprintf(f, ",%.17g", y[i]);
    fputc('\n', f);
}

int main(int argc, char **argv)
{
    double t_end = 10, dt = 0.01;
    const char *out = NULL;
    long N = 8;
    int banded = 0, proj = 0, with_work = 0, rhs_only = 0, opt;
    while ((opt = getopt(argc, argv, "n:btT:d:o:pwra:")) != -1) {
        switch (opt) {
        case 'n': N = atol(optarg); break;
        case 'a': th0 = atof(optarg); break;
        case 'b': banded = 1; break;
        case 't': banded = 2; break;
        case 'T': t_end = atof(optarg); break;
        case 'd': dt = atof(optarg); break;
        case 'o': out = optarg; break;
        case 'p': proj = 1; break;
        case 'w': with_work = 1; break;
        case 'r': rhs_only = 1; break;
        default:
            fprintf(stderr, "usage: baseline_chain -n N [-b|-t] [-T t_end] [-d dt] [-o FILE] "
                    "[-p] [-w] [-r]\n");
            return 1;
        }
    }
    if (N < 1 || N > 100000) {
        fprintf(stderr, "baseline_chain: bad N\n");
        return 1;
    }
    if (self_check((size_t)N))
        return 2;
    double wall0 = now();
    chain c;
    chain_init(&c, (size_t)N, banded, with_work);
    if (rhs_only) {
        time_rhs(&c);
        chain_free(&c);
        return 0;
    }
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) {
        perror(out);
        return 1;
    }
    size_t n = 2 * (size_t)N, dim = 2 * n + (with_work ? 2 : 0);
    double *y = calloc(2 * n + 2, sizeof *y), *scratch = calloc(2 * (size_t)N + 2 * n,
                                                                 sizeof *scratch);
    initial((size_t)N, y);
    if (proj && project(&c, y, y + n, scratch)) {
        fprintf(stderr, "baseline_chain: projection failed at t=0\n");
        return 4;
    }
    gsl_odeiv2_system sys = { rhs, NULL, dim, &c };
    double t = 0, h = fmin(dt, t_end) * 1e-3;
    gsl_odeiv2_driver *drv = gsl_odeiv2_driver_alloc_standard_new(
        &sys, gsl_odeiv2_step_rk8pd, h, 1e-10, 1e-10, 1.0, 0.0);
    fprintf(f, "t");
    for (long i = 1; i <= N; i++)
        fprintf(f, ",x%ld,y%ld", i, i);
    for (long i = 1; i <= N; i++)
        fprintf(f, ",x%ld',y%ld'", i, i);
    fputc('\n', f);
    row(f, t, y, n);
    long nrows = (long)ceil(t_end / dt - 1e-9), steps = 0;
    for (long i = 1; i <= nrows; i++) {
        double t1 = i == nrows ? t_end : (double)i * dt;
        while (t < t1) {
            int st = gsl_odeiv2_evolve_apply(drv->e, drv->c, drv->s, &sys, &t, t1, &h, y);
            if (st != GSL_SUCCESS) {
                fprintf(stderr, "baseline_chain: stepper failed at t=%.17g: %s\n", t,
                        gsl_strerror(st));
                return 4;
            }
            steps++;
            if (proj) {
                if (project(&c, y, y + n, scratch)) {
                    fprintf(stderr, "baseline_chain: projection failed at t=%.17g\n", t);
                    return 4;
                }
                gsl_odeiv2_evolve_reset(drv->e);
                gsl_odeiv2_step_reset(drv->s);
            }
        }
        row(f, t, y, n);
    }
    if (f != stdout && fclose(f) != 0) {
        perror(out);
        return 1;
    }
    fprintf(stderr, "baseline_chain: N %ld %s steps %ld rhs_evals %ld wall_s %.6f\n", N,
            banded == 2 ? "tridiagonal" : banded ? "banded" : "dense", steps, c.nrhs,
            now() - wall0);
    gsl_odeiv2_driver_free(drv);
    chain_free(&c);
    free(y);
    free(scratch);
    return 0;
}
