import { GoTo } from '@/ui/GoTo';

/** `/`: signed in, the plants; signed out, the shell shows the sign-in form here. */
export default function HomePage() {
  return <GoTo href="/plants" />;
}
