// Simbody peer for bench/peers.sh: the N-link planar chain (unit point
// masses, l = 1, g = 9.81, every absolute angle th0 from the downward
// vertical, at rest), integrated with RungeKuttaMersonIntegrator at the
// given accuracy to T_END.
//   pins: N MobilizedBody::Pin in a chain, each body a point mass at the
//         far end of its link (Simbody's O(N) recursion, N angles);
//   rods: N free particles (MobilizedBody::Translation) held by N
//         Constraint::Rod (multipliers, like holosim's Cartesian form).
//   peers_simbody pins|rods N T_END ACCURACY [TH0 [merson|feldberg|rk3|cpodes]]
// Prints one line: "nreal K cpu_s S wall_s W" then the N final absolute
// angles, from the positions of the masses by atan2.  cpu_s, wall_s:
// CLOCK_PROCESS_CPUTIME_ID, CLOCK_MONOTONIC around the integrator's
// initialize and stepTo only.
#include "Simbody.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

using namespace SimTK;

static double clock_now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 5 || (std::strcmp(argv[1], "pins") && std::strcmp(argv[1], "rods"))) {
        std::fprintf(stderr, "usage: peers_simbody pins|rods N T_END ACCURACY "
                             "[TH0 [merson|feldberg|rk3|cpodes]]\n");
        return 2;
    }
    const bool pins = !std::strcmp(argv[1], "pins");
    const int n = std::atoi(argv[2]);
    const double tend = std::atof(argv[3]), acc = std::atof(argv[4]);
    const double th0 = argc > 5 ? std::atof(argv[5]) : 1.0;
    const double l = 1.0, m = 1.0, g = 9.81;
    if (n < 1 || !(tend > 0) || !(acc > 0)) {
        std::fprintf(stderr, "peers_simbody: bad arguments\n");
        return 2;
    }
    try {
        MultibodySystem system;
        SimbodyMatterSubsystem matter(system);
        GeneralForceSubsystem forces(system);
        Force::UniformGravity gravity(forces, matter, Vec3(0, -g, 0));
        std::vector<MobilizedBody> bodies;
        std::vector<Vec3> station;               // the mass, in its body's frame
        if (pins) {
            // body frame at the pin; the mass at (0, -l, 0); rotation about z
            const Vec3 tip(0, -l, 0);
            Body::Rigid link(MassProperties(m, tip, Inertia::pointMassAt(tip, m)));
            MobilizedBody parent = matter.Ground();
            for (int i = 0; i < n; i++) {
                MobilizedBody::Pin b(parent, Transform(i ? tip : Vec3(0)), link, Transform());
                bodies.push_back(b);
                station.push_back(tip);
                parent = b;
            }
        } else {
            Body::Rigid particle(MassProperties(m, Vec3(0), Inertia(0)));
            for (int i = 0; i < n; i++) {
                MobilizedBody::Translation b(matter.Ground(), Transform(), particle, Transform());
                if (i == 0)
                    Constraint::Rod(matter.Ground(), Vec3(0), b, Vec3(0), l);
                else
                    Constraint::Rod(bodies.back(), Vec3(0), b, Vec3(0), l);
                bodies.push_back(b);
                station.push_back(Vec3(0));
            }
        }
        system.realizeTopology();
        State s = system.getDefaultState();
        if (pins) {
            bodies[0].setOneQ(s, 0, th0);       // relative angles: th0, 0, 0, ...
        } else {
            for (int i = 0; i < n; i++)
                MobilizedBody::Translation::downcast(bodies[i])
                    .setQToFitTranslation(s, Vec3((i + 1) * l * std::sin(th0),
                                                  -(i + 1) * l * std::cos(th0), 0));
        }
        const char *which = argc > 6 ? argv[6] : "merson";
        Integrator *ip;
        if (!std::strcmp(which, "feldberg"))
            ip = new RungeKuttaFeldbergIntegrator(system);
        else if (!std::strcmp(which, "rk3"))
            ip = new RungeKutta3Integrator(system);
        else if (!std::strcmp(which, "cpodes"))
            ip = new CPodesIntegrator(system, CPodes::BDF, CPodes::Newton);
        else
            ip = new RungeKuttaMersonIntegrator(system);
        Integrator &integ = *ip;
        integ.setAccuracy(acc);
        double w0 = clock_now(CLOCK_MONOTONIC), c0 = clock_now(CLOCK_PROCESS_CPUTIME_ID);
        integ.initialize(s);
        while (integ.getTime() < tend) {
            Integrator::SuccessfulStepStatus st = integ.stepTo(tend);
            if (st == Integrator::EndOfSimulation)
                break;
        }
        double c1 = clock_now(CLOCK_PROCESS_CPUTIME_ID), w1 = clock_now(CLOCK_MONOTONIC);
        const State &f = integ.getState();
        system.realize(f, Stage::Position);
        std::printf("nreal %lld cpu_s %.6f wall_s %.6f", (long long)integ.getNumRealizations(),
                    c1 - c0, w1 - w0);
        double px = 0, py = 0;
        for (int i = 0; i < n; i++) {
            Vec3 p = bodies[i].findStationLocationInGround(f, station[i]);
            std::printf(" %.17g", std::atan2(p[0] - px, -(p[1] - py)));
            px = p[0];
            py = p[1];
        }
        std::printf("\n");
        delete ip;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "peers_simbody: %s\n", e.what());
        return 4;
    }
    return 0;
}
