/**
 * Driving behaviour profiles, named after the Frenetix planner behaviours behind the benchmark's
 * CARLA clips (balanced, comfort, default, sporty, safety). Each bounds how hard the kinematic
 * bicycle model may accelerate, brake, jerk and corner; scenarios scale their manoeuvres by them.
 * Emergency braking ignores the profile's braking and jerk limits (physics, not preference).
 */
export interface BehaviourProfile {
  name: ProfileName;
  /** Largest planned acceleration (m/s²). */
  maxAccel: number;
  /** Largest planned (non-emergency) deceleration (m/s², positive). */
  maxDecel: number;
  /** Longitudinal jerk limit (m/s³). */
  maxJerk: number;
  /** Lateral acceleration limit (m/s²): curvature is capped at maxLatAccel / v². */
  maxLatAccel: number;
  /** Road-wheel steering rate limit (rad/s). */
  steerRate: number;
  /** Multiplies cruise speeds. */
  speedFactor: number;
}

export const PROFILE_NAMES = ['balanced', 'comfort', 'default', 'sporty', 'safety'] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

export const PROFILES: Readonly<Record<ProfileName, BehaviourProfile>> = {
  comfort: { name: 'comfort', maxAccel: 1.3, maxDecel: 1.9, maxJerk: 1.6, maxLatAccel: 1.9, steerRate: 0.25, speedFactor: 0.9 },
  safety: { name: 'safety', maxAccel: 1.1, maxDecel: 2.4, maxJerk: 2.5, maxLatAccel: 1.7, steerRate: 0.3, speedFactor: 0.85 },
  balanced: { name: 'balanced', maxAccel: 1.9, maxDecel: 3.0, maxJerk: 3.6, maxLatAccel: 2.7, steerRate: 0.4, speedFactor: 1.0 },
  default: { name: 'default', maxAccel: 2.3, maxDecel: 3.6, maxJerk: 5.0, maxLatAccel: 3.3, steerRate: 0.5, speedFactor: 1.0 },
  sporty: { name: 'sporty', maxAccel: 3.3, maxDecel: 5.2, maxJerk: 9.0, maxLatAccel: 4.3, steerRate: 0.7, speedFactor: 1.15 },
};

export function isProfileName(s: string): s is ProfileName {
  return (PROFILE_NAMES as readonly string[]).includes(s);
}
