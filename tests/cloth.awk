# The N x N cloth of tests/cli_cloth.sh: unit masses on rods of length l, its
# top row (j = 0) pinned, the sheet tilted 0.3 rad from the horizontal.
# ORDER=a: every horizontal rod, then every vertical one (C = G_q M^-1 G_q^T
# has no narrow band: the sparse path); ORDER=b: the rods of each particle
# together (a band of width about 2N).
#   awk -v N=10 -v ORDER=a -f tests/cloth.awk > cloth.yaml
BEGIN {
    printf "name: cloth%d%s\nparameters: {m: 1.0, l: 1.0, g: 9.81}\ncoordinates: [", N, ORDER
    s = ""
    for (i = 1; i <= N; i++) for (j = 1; j < N; j++)
        s = s (s == "" ? "" : ", ") "x_" i "_" j ", y_" i "_" j ", z_" i "_" j
    printf "%s]\nmass: [", s
    s = ""
    for (c = 1; c <= 3 * N * (N - 1); c++) s = s (c > 1 ? ", " : "") "m"
    printf "%s]\npotential: m*g*(", s
    s = ""
    for (i = 1; i <= N; i++) for (j = 1; j < N; j++) s = s (s == "" ? "" : " + ") "z_" i "_" j
    printf "%s)\nconstraints:\n", s
    if (ORDER == "a") {
        for (i = 1; i < N; i++) for (j = 1; j < N; j++) h(i, j)
        for (i = 1; i <= N; i++) for (j = 1; j < N; j++) v(i, j)
    } else
        for (i = 1; i <= N; i++) for (j = 1; j < N; j++) { v(i, j); if (i < N) h(i, j) }
    printf "initial:\n  q:\n"
    for (i = 1; i <= N; i++) for (j = 1; j < N; j++)
        printf "    x_%d_%d: %d*l\n    y_%d_%d: %d*l*cos(0.3)\n    z_%d_%d: %d*l*sin(0.3)\n", i, j, i - 1, i, j, j, i, j, j
}
function p(i, j, c) { return j == 0 ? (c == "x" ? (i - 1) "*l" : "0") : c "_" i "_" j }
function h(i, j) {
    printf "  h_%d_%d: (%s - %s)^2 + (%s - %s)^2 + (%s - %s)^2 - l^2\n", i, j,
        p(i + 1, j, "x"), p(i, j, "x"), p(i + 1, j, "y"), p(i, j, "y"), p(i + 1, j, "z"), p(i, j, "z")
}
function v(i, j) {
    printf "  v_%d_%d: (%s - %s)^2 + (%s - %s)^2 + (%s - %s)^2 - l^2\n", i, j,
        p(i, j, "x"), p(i, j - 1, "x"), p(i, j, "y"), p(i, j - 1, "y"), p(i, j, "z"), p(i, j - 1, "z")
}
